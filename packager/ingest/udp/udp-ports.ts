// UDP ports for the relays: a public port with its companions (RTCP at +1, SMPTE 2022-1 FEC at +2 and +4),
// bound together so nothing else takes a companion in between; and a free loopback port for ffmpeg.
import dgram from 'node:dgram';

function bind(socket: dgram.Socket, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    socket.once('error', onError);
    socket.bind(port, host, () => {
      socket.off('error', onError);
      resolve();
    });
  });
}

async function closeAll(sockets: dgram.Socket[]): Promise<void> {
  await Promise.all(sockets.map((socket) => new Promise<void>((resolve) => {
    try {
      socket.close(() => resolve());
    } catch {
      resolve();
    }
  })));
}

/**
 * Binds `port` (0: any) on `host` and `port + offset` for each offset; `sockets[0]` is the main port. With
 * port 0 it retries until a main port with free companions is found.
 */
export async function bindPortGroup(host: string, port: number, offsets: readonly number[]): Promise<dgram.Socket[]> {
  const type = host.includes(':') ? 'udp6' : 'udp4';
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const main = dgram.createSocket(type);
    await bind(main, port, host);
    const chosen = main.address().port;
    const sockets = [main];
    try {
      for (const offset of offsets) {
        if (chosen + offset > 65_535) throw Object.assign(new Error('port out of range'), { code: 'EADDRINUSE' });
        const companion = dgram.createSocket(type);
        sockets.push(companion);
        await bind(companion, chosen + offset, host);
      }
      return sockets;
    } catch (error) {
      await closeAll(sockets);
      if (port !== 0 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
  }
  throw new Error('no UDP port with free companions was found');
}

/** A loopback port (and its companions) free right now, for an ffmpeg listener to bind. */
export async function freeLoopbackPort(offsets: readonly number[]): Promise<number> {
  const sockets = await bindPortGroup('127.0.0.1', 0, offsets);
  const port = sockets[0]?.address().port ?? 0;
  await closeAll(sockets);
  return port;
}

export { closeAll as closeSockets };
