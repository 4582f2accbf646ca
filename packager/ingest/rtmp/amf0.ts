// AMF0 (the encoding of RTMP commands and metadata), only the types RTMP publishers send: number, boolean,
// string, object, null, undefined, ECMA array, strict array, date, long string.
export type AmfValue = number | boolean | string | null | undefined | Date | AmfValue[] | { [key: string]: AmfValue };

const NUMBER = 0x00;
const BOOLEAN = 0x01;
const STRING = 0x02;
const OBJECT = 0x03;
const NULL = 0x05;
const UNDEFINED = 0x06;
const ECMA_ARRAY = 0x08;
const OBJECT_END = 0x09;
const STRICT_ARRAY = 0x0a;
const DATE = 0x0b;
const LONG_STRING = 0x0c;

export class AmfError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AmfError';
  }
}

/** Decodes every value of a command or data message body. */
export function decodeAmf0(buffer: Buffer): AmfValue[] {
  const values: AmfValue[] = [];
  let offset = 0;
  const need = (count: number) => {
    if (offset + count > buffer.length) throw new AmfError('AMF0 value runs past the end of the message');
  };
  const readString = (lengthBytes: 2 | 4): string => {
    need(lengthBytes);
    const length = lengthBytes === 2 ? buffer.readUInt16BE(offset) : buffer.readUInt32BE(offset);
    offset += lengthBytes;
    need(length);
    const text = buffer.toString('utf8', offset, offset + length);
    offset += length;
    return text;
  };
  const readProperties = (): Record<string, AmfValue> => {
    const object: Record<string, AmfValue> = {};
    for (;;) {
      const key = readString(2);
      need(1);
      if (key === '' && buffer[offset] === OBJECT_END) {
        offset += 1;
        return object;
      }
      object[key] = readValue();
    }
  };
  const readValue = (): AmfValue => {
    need(1);
    const marker = buffer[offset];
    offset += 1;
    switch (marker) {
      case NUMBER: {
        need(8);
        const value = buffer.readDoubleBE(offset);
        offset += 8;
        return value;
      }
      case BOOLEAN:
        need(1);
        offset += 1;
        return buffer[offset - 1] !== 0;
      case STRING:
        return readString(2);
      case LONG_STRING:
        return readString(4);
      case OBJECT:
        return readProperties();
      case NULL:
        return null;
      case UNDEFINED:
        return undefined;
      case ECMA_ARRAY:
        need(4);
        offset += 4; // the count is a hint; the properties end with the object-end marker
        return readProperties();
      case STRICT_ARRAY: {
        need(4);
        const count = buffer.readUInt32BE(offset);
        offset += 4;
        const array: AmfValue[] = [];
        for (let index = 0; index < count; index += 1) array.push(readValue());
        return array;
      }
      case DATE: {
        need(10);
        const value = new Date(buffer.readDoubleBE(offset));
        offset += 10;
        return value;
      }
      default:
        throw new AmfError(`unsupported AMF0 marker ${String(marker)}`);
    }
  };
  while (offset < buffer.length) values.push(readValue());
  return values;
}

export function encodeAmf0(...values: AmfValue[]): Buffer {
  const parts: Buffer[] = [];
  const writeKey = (key: string) => {
    const bytes = Buffer.from(key, 'utf8');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(bytes.length);
    parts.push(length, bytes);
  };
  const write = (value: AmfValue): void => {
    if (typeof value === 'number') {
      const bytes = Buffer.alloc(9);
      bytes[0] = NUMBER;
      bytes.writeDoubleBE(value, 1);
      parts.push(bytes);
    } else if (typeof value === 'boolean') {
      parts.push(Buffer.from([BOOLEAN, value ? 1 : 0]));
    } else if (typeof value === 'string') {
      parts.push(Buffer.from([STRING]));
      writeKey(value);
    } else if (value === null) {
      parts.push(Buffer.from([NULL]));
    } else if (value === undefined) {
      parts.push(Buffer.from([UNDEFINED]));
    } else if (value instanceof Date) {
      const bytes = Buffer.alloc(11);
      bytes[0] = DATE;
      bytes.writeDoubleBE(value.getTime(), 1);
      parts.push(bytes);
    } else if (Array.isArray(value)) {
      const head = Buffer.alloc(5);
      head[0] = STRICT_ARRAY;
      head.writeUInt32BE(value.length, 1);
      parts.push(head);
      value.forEach(write);
    } else {
      parts.push(Buffer.from([OBJECT]));
      for (const [key, entry] of Object.entries(value)) {
        writeKey(key);
        write(entry);
      }
      parts.push(Buffer.from([0, 0, OBJECT_END]));
    }
  };
  values.forEach(write);
  return Buffer.concat(parts);
}
