// A bare grpc-js server of the CSI contract answering Probe and GetCapacity with constants: the floor any Node.js driver's call latency stands on, for the driver bench's comparison.
import * as grpc from '@grpc/grpc-js';
import { csiPackage } from '../src/csi/proto.js';

const socket = process.argv[2];
if (socket === undefined) {
  console.error('usage: grpc-floor-server.js SOCKET');
  process.exit(2);
}
const pkg = csiPackage();
// The server options Lode's driver uses (src/driver/server.ts), so the difference is Lode's own work.
const server = new grpc.Server({ 'grpc.enable_channelz': 0, 'grpc.max_receive_message_length': 128 * 1024 });
server.addService(pkg.csi.v1.Identity.service, {
  Probe: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { ready: { value: true } }),
  GetPluginInfo: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { name: 'floor.example', vendor_version: '0' }),
  GetPluginCapabilities: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { capabilities: [] }),
});
server.addService(pkg.csi.v1.Controller.service, {
  GetCapacity: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { available_capacity: '1073741824' }),
});
server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (err) => {
  if (err) {
    console.error(err.message);
    process.exit(1);
  }
});
process.on('SIGTERM', () => server.tryShutdown(() => process.exit(0)));
