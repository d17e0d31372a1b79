// The kubelet side of plugin registration: waits for a registrar's socket, asks GetInfo, and tells it the outcome with NotifyRegistrationStatus.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const PROTO = fileURLToPath(new URL('../../../../proto/pluginregistration.proto', import.meta.url));

export interface PluginInfo {
  type: string;
  name: string;
  endpoint: string;
  supported_versions: string[];
}

type Unary<Req, Res> = (req: Req, opts: { deadline: Date }, cb: (err: grpc.ServiceError | null, res?: Res) => void) => void;
interface RegistrationClient extends grpc.Client {
  GetInfo: Unary<Record<string, never>, PluginInfo>;
  NotifyRegistrationStatus: Unary<{ plugin_registered: boolean; error: string }, Record<string, never>>;
}
type RegistrationCtor = new (address: string, creds: grpc.ChannelCredentials) => RegistrationClient;

let ctor: RegistrationCtor | undefined;
function registrationClient(socket: string): RegistrationClient {
  if (ctor === undefined) {
    const def = protoLoader.loadSync(PROTO, { keepCase: true, defaults: true });
    const pkg = grpc.loadPackageDefinition(def) as unknown as { pluginregistration: { Registration: RegistrationCtor } };
    ctor = pkg.pluginregistration.Registration;
  }
  return new ctor(`unix://${socket}`, grpc.credentials.createInsecure());
}

function call<Req, Res>(fn: Unary<Req, Res>, client: RegistrationClient, req: Req): Promise<Res> {
  return new Promise((resolve, reject) => fn.call(client, req, { deadline: new Date(Date.now() + 10_000) }, (err, res) => (err ? reject(err) : resolve(res as Res))));
}

/** Waits (wall time, bounded) for a registrar to create its socket, as kubelet's plugin watcher sees a new file. */
export async function waitForSocket(socket: string, isAlive: () => boolean, limitMs = 60_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!existsSync(socket)) {
    if (!isAlive()) throw new Error(`the registrar stopped before creating ${socket}`);
    if (Date.now() > deadline) throw new Error(`no registration socket ${socket} after ${limitMs / 1000}s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Registers the plugin behind `socket`: GetInfo, then `validate` (kubelet checks the type,
 * the CSI versions, and sets up the driver: NodeGetInfo, the Node's labels, the CSINode), then
 * NotifyRegistrationStatus with the outcome. Returns the info; throws what validate threw.
 */
export async function registerPlugin(socket: string, validate: (info: PluginInfo) => Promise<void>): Promise<PluginInfo> {
  const client = registrationClient(socket);
  try {
    const info = await call(client.GetInfo, client, {});
    let failure: Error | undefined;
    try {
      if (info.type !== 'CSIPlugin') throw new Error(`plugin type "${info.type}", not CSIPlugin`);
      if (!info.supported_versions.some((v) => /^1\./.test(v) || v === '1')) throw new Error(`no supported CSI version 1.x in [${info.supported_versions.join(', ')}]`);
      await validate(info);
    } catch (err) {
      failure = err as Error;
    }
    await call(client.NotifyRegistrationStatus, client, { plugin_registered: failure === undefined, error: failure?.message ?? '' });
    if (failure !== undefined) throw failure;
    return info;
  } finally {
    client.close();
  }
}
