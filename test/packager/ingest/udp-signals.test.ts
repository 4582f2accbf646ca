import { describe, expect, it } from 'vitest';
import { RtpLossCounter } from '../../../packager/ingest/udp/rtp-loss.js';
import { srtSignal } from '../../../packager/ingest/udp/srt-handshake.js';
import { addressFilter } from '../../../packager/ingest/address-filter.js';
import { RtpReorderBuffer } from '../../../packager/ingest/udp/rtp-reorder.js';

function rtp(sequence: number): Buffer {
  const packet = Buffer.alloc(12);
  packet[0] = 0x80;
  packet.writeUInt16BE(sequence, 2);
  return packet;
}

function srtHandshake(type: number): Buffer {
  const packet = Buffer.alloc(64);
  packet.writeUInt16BE(0x8000, 0);
  packet.writeUInt32BE(type, 36);
  return packet;
}

describe('RTP loss counter', () => {
  it('counts the sequence numbers that never came, across the 16-bit wrap', () => {
    const counter = new RtpLossCounter();
    for (const sequence of [65_533, 65_534, 1, 2, 5]) counter.add(rtp(sequence));
    expect(counter.lost).toBe(2 + 2); // 65535 and 0, then 3 and 4
  });

  it('takes a large jump for a sender restart, not for loss', () => {
    const counter = new RtpLossCounter();
    for (const sequence of [100, 101, 30_000, 30_001]) counter.add(rtp(sequence));
    expect(counter.lost).toBe(0);
  });
});

describe('SRT signals', () => {
  it('takes the listener\'s conclusion as accepted, a rejection code as refused, and ignores the caller\'s own conclusion', () => {
    expect(srtSignal(srtHandshake(0xffffffff), true)).toEqual({ kind: 'accepted' });
    expect(srtSignal(srtHandshake(0xffffffff), false)).toBeUndefined();
    expect(srtSignal(srtHandshake(1010), true)).toEqual({ kind: 'refused', reason: 'wrong passphrase' });
    expect(srtSignal(srtHandshake(1), true)).toBeUndefined(); // induction
  });

  it('sees a shutdown from either side, and no signal in a data packet', () => {
    const shutdown = Buffer.alloc(16);
    shutdown.writeUInt16BE(0x8005, 0);
    expect(srtSignal(shutdown, false)).toEqual({ kind: 'shutdown' });
    expect(srtSignal(Buffer.alloc(1316), true)).toBeUndefined();
  });
});

describe('address filter', () => {
  it('lets anyone push with an empty list, and only listed blocks otherwise, IPv4-mapped addresses included', () => {
    expect(addressFilter([])('203.0.113.9')).toBe(true);
    const allows = addressFilter(['127.0.0.1/32', '2001:db8::/32']);
    expect(allows('127.0.0.1')).toBe(true);
    expect(allows('::ffff:127.0.0.1')).toBe(true);
    expect(allows('127.0.0.2')).toBe(false);
    expect(allows('2001:db8::1')).toBe(true);
    expect(allows('not an address')).toBe(false);
  });
});

describe('RTP reorder buffer', () => {
  const sequences = (packets: Buffer[]) => packets.map((packet) => packet.readUInt16BE(2));

  it('passes packets in order through at once, across the 16-bit wrap', () => {
    const buffer = new RtpReorderBuffer(500);
    expect(sequences([65_534, 65_535, 0, 1].flatMap((sequence) => buffer.push(rtp(sequence), 0)))).toEqual([65_534, 65_535, 0, 1]);
  });

  it('holds the packets behind a gap until the missing one comes, then lets them out in order', () => {
    const buffer = new RtpReorderBuffer(500);
    expect(sequences(buffer.push(rtp(10), 0))).toEqual([10]);
    expect(buffer.push(rtp(12), 10)).toEqual([]);
    expect(buffer.push(rtp(13), 20)).toEqual([]);
    expect(buffer.due(400)).toEqual([]);
    expect(sequences(buffer.push(rtp(11), 450))).toEqual([11, 12, 13]);
    expect(buffer.push(rtp(11), 460)).toEqual([]); // a late duplicate
  });

  it('skips a gap nothing filled once it waited long enough', () => {
    const buffer = new RtpReorderBuffer(500);
    buffer.push(rtp(1), 0);
    buffer.push(rtp(3), 100);
    buffer.push(rtp(4), 120);
    expect(buffer.due(599)).toEqual([]);
    expect(sequences(buffer.due(600))).toEqual([3, 4]);
    expect(buffer.skipped).toBe(1);
    expect(buffer.push(rtp(2), 700)).toEqual([]); // too late now
  });
});
