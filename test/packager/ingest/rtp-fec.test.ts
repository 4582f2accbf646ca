import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { FecRecovery } from '../../../packager/ingest/udp/fec-recovery.js';
import { openUdpFront, type UdpIngestFront } from '../../../packager/ingest/udp/udp-front.js';
import { spawnFfmpeg } from '../../../media/ffmpeg-process.js';
import { FFMPEG, killStarted, nextEvent, startSender } from './ingest-harness.js';

const L = 4;
const D = 4;
const SIZE = 1316;

function media(sequence: number): Buffer {
  const packet = Buffer.concat([Buffer.alloc(12), randomBytes(SIZE)]);
  packet[0] = 0x80;
  packet[1] = 33 | (sequence % 7 === 0 ? 0x80 : 0);
  packet.writeUInt16BE(sequence & 0xffff, 2);
  packet.writeUInt32BE((sequence * 3_600) >>> 0, 4);
  packet.writeUInt32BE(0xabcdef01, 8);
  return packet;
}

/** One SMPTE 2022-1 FEC packet over `packets` (the layout ffmpeg's prompeg writes). */
function fecOver(packets: Buffer[], offset: number): Buffer {
  const fec = Buffer.alloc(12 + 16 + SIZE);
  let byte1 = 0;
  let timestamp = 0;
  for (const packet of packets) {
    byte1 ^= packet[1] ?? 0;
    timestamp = (timestamp ^ packet.readUInt32BE(4)) >>> 0;
    for (let index = 0; index < SIZE; index += 1) fec[28 + index] = (fec[28 + index] ?? 0) ^ (packet[12 + index] ?? 0);
  }
  fec[0] = 0x80;
  fec[1] = (byte1 & 0x80) | 0x60;
  fec.writeUInt16BE(packets[0]?.readUInt16BE(2) ?? 0, 12);
  fec.writeUInt16BE(SIZE, 14);
  fec[16] = 0x80 | (byte1 & 0x7f);
  fec.writeUInt32BE(timestamp, 20);
  fec[24] = offset === 1 ? 0x40 : 0;
  fec[25] = offset;
  fec[26] = packets.length;
  return fec;
}

describe('SMPTE 2022-1 recovery', () => {
  // a block of L × D packets from sequence 65_530: the block crosses the 16-bit wrap
  const block = Array.from({ length: L * D }, (_, index) => media(65_530 + index));
  const rows = Array.from({ length: D }, (_, row) => fecOver(block.slice(row * L, row * L + L), 1));
  const columns = Array.from({ length: L }, (_, column) => fecOver(block.filter((_, index) => index % L === column), L));

  it('rebuilds a lost packet bit for bit from its row', () => {
    const recovery = new FecRecovery();
    block.forEach((packet, index) => index !== 5 && recovery.addMedia(packet));
    const rebuilt = rows.flatMap((fec) => recovery.addFec(fec));
    expect(rebuilt).toHaveLength(1);
    expect(rebuilt[0]?.equals(block[5] ?? Buffer.alloc(0))).toBe(true);
    expect(recovery.recovered).toBe(1);
  });

  it('rebuilds two losses of one row through their columns, and a third one that needed both directions', () => {
    const recovery = new FecRecovery();
    const lost = new Set([4, 5, 9]); // 4 and 5 share row 1; 5 and 9 share column 1
    block.forEach((packet, index) => !lost.has(index) && recovery.addMedia(packet));
    const rebuilt = [...rows, ...columns].flatMap((fec) => recovery.addFec(fec));
    expect(rebuilt.map((packet) => packet.readUInt16BE(2)).sort((a, b) => a - b)).toEqual([...lost].map((index) => (65_530 + index) & 0xffff).sort((a, b) => a - b));
    for (const packet of rebuilt) expect(packet.equals(block.find((original) => original.readUInt16BE(2) === packet.readUInt16BE(2)) ?? Buffer.alloc(0))).toBe(true);
  });

  it('rebuilds nothing when a row lost two packets and no column FEC came', () => {
    const recovery = new FecRecovery();
    block.forEach((packet, index) => index !== 4 && index !== 5 && recovery.addMedia(packet));
    expect(rows.flatMap((fec) => recovery.addFec(fec))).toEqual([]);
  });
});

describe('RTP_FEC front with a lossy network', () => {
  const fronts: UdpIngestFront[] = [];
  afterEach(async () => {
    await Promise.all(fronts.splice(0).map((front) => front.close()));
    await killStarted();
  });

  /** Loses one media datagram in 10 on the way in, as a network would. */
  async function receiveThroughLoss(protocol: 'RTP' | 'RTP_FEC') {
    const front = await openUdpFront({
      protocol, host: '127.0.0.1', port: 0, cidrs: [],
      dropInbound: (index, datagram) => index === 0 && datagram.length > 12 && datagram.readUInt16BE(2) % 10 === 7,
    });
    fronts.push(front);
    const connected = nextEvent(front, 'connected');
    startSender(`rtp://127.0.0.1:${front.port}`, 'rtp_mpegts', { outputOptions: ['-b:v', '1500k', '-fec', 'prompeg=l=5:d=5'] });
    await connected;
    const receiver = spawnFfmpeg(FFMPEG, ['-loglevel', 'warning', ...front.encoderInputArgs(), '-map', '0:v:0', '-frames:v', '100', '-f', 'null', '-']);
    const exit = await receiver.exited;
    return { front, exit, stderr: receiver.stderrTail() };
  }

  it('gives the encoder every packet back from the FEC streams, where plain RTP shows the damage', async () => {
    const withFec = await receiveThroughLoss('RTP_FEC');
    expect(withFec.exit.code).toBe(0);
    const stats = withFec.front.stats();
    expect(stats.packetsLost).toBeGreaterThan(5);
    // (a packet lost before the first one that arrived is rebuilt without being counted lost)
    expect(stats.packetsRecovered).toBeGreaterThanOrEqual(stats.packetsLost ?? 0);
    const damage = /corrupt|continuity|error while decoding|concealing|Invalid|missing/i;
    // the first keyframe may be joined mid-way; after it, nothing is damaged
    const afterStart = withFec.stderr.split('\n').filter((line) => !/non-existing PPS|decode_slice_header|no frame!/.test(line));
    expect(afterStart.filter((line) => damage.test(line))).toEqual([]);

    const plain = await receiveThroughLoss('RTP');
    expect(plain.front.stats().packetsLost).toBeGreaterThan(5);
    expect(plain.stderr).toMatch(damage);
  });
});
