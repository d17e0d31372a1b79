// Test support: kubelet's side of plugin registration: asks a registration socket (node-driver-registrar's) which plugin it announces.
import * as grpc from '@grpc/grpc-js';

/** What a registration socket announces (kubelet's PluginInfo message). */
export interface PluginInfo {
  type: string;
  name: string;
  endpoint: string;
  supportedVersions: string[];
}

/** Reads a length-delimited or varint field list; the message has only strings, so that is all it needs. */
function decodePluginInfo(buf: Buffer): PluginInfo {
  const info: PluginInfo = { type: '', name: '', endpoint: '', supportedVersions: [] };
  let i = 0;
  const varint = (): number => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const b = buf[i++];
      if (b === undefined) throw new Error('PluginInfo: truncated varint');
      v += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return v;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) { varint(); continue; }
    if (wire !== 2) throw new Error(`PluginInfo: unexpected wire type ${wire}`);
    const len = varint();
    const text = buf.subarray(i, i + len).toString('utf8');
    i += len;
    if (field === 1) info.type = text;
    else if (field === 2) info.name = text;
    else if (field === 3) info.endpoint = text;
    else if (field === 4) info.supportedVersions.push(text);
  }
  return info;
}

/** Registration.GetInfo on `socket`, as kubelet's plugin watcher calls it. */
export function getPluginInfo(socket: string, timeoutMs = 10_000): Promise<PluginInfo> {
  const client = new grpc.Client(`unix://${socket}`, grpc.credentials.createInsecure());
  return new Promise<PluginInfo>((resolve, reject) => {
    client.makeUnaryRequest<Buffer, PluginInfo>(
      '/pluginregistration.Registration/GetInfo',
      (req) => req,
      decodePluginInfo,
      Buffer.alloc(0), // InfoRequest has no fields
      { deadline: Date.now() + timeoutMs },
      (err, res) => {
        client.close();
        if (err || res === undefined) reject(err ?? new Error('GetInfo: no answer'));
        else resolve(res);
      },
    );
  });
}
