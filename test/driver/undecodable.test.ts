// Requests that are not valid protobuf: every method answers INVALID_ARGUMENT (the caller's mistake, not the driver's), and the connection keeps working.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { csiPackage } from '../../src/csi/proto.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { status } from './support.js';

let h: DriverHarness;
let raw: grpc.Client;

before(async () => {
  h = await DriverHarness.start();
  raw = new grpc.Client(`unix:${h.socket}`, grpc.credentials.createInsecure());
});

after(async () => {
  raw?.close();
  await h?.cleanup();
});

/** Sends `bytes` as the encoded request of `path`, as a client with its own (or no) encoder would. */
function send(path: string, bytes: Buffer): Promise<grpc.ServiceError | undefined> {
  return new Promise((resolve) => {
    raw.makeUnaryRequest(path, (b: Buffer) => b, (b: Buffer) => b, bytes, { deadline: Date.now() + 30_000 }, (err) => resolve(err ?? undefined));
  });
}

const GARBAGE: Array<[string, Buffer]> = [
  ['an invalid wire type', Buffer.from([0x7f, 0x01, 0x02])],
  ['a length past the end', Buffer.from([0x7a, 0x7f, 0x61, 0x62])],
  ['an unterminated varint', Buffer.from([0x08, 0xff, 0xff, 0xff])],
];

test('garbage bytes are INVALID_ARGUMENT on every method, and a valid call still works afterwards', async () => {
  const v1 = csiPackage().csi.v1;
  const methods = [v1.Identity.service, v1.Controller.service, v1.Node.service].flatMap((s) => Object.values(s).map((m) => m.path));
  assert.ok(methods.length >= 18, `all methods (${methods.length})`);
  for (const path of methods) {
    for (const [what, bytes] of GARBAGE) {
      const err = await send(path, bytes);
      assert.ok(err, `${path} with ${what}: refused`);
      assert.equal(status[err.code], 'INVALID_ARGUMENT', `${path} with ${what}: ${err.details}`);
      assert.match(err.details, /not a valid/, `${path} with ${what}: the message says what is wrong`);
    }
  }
  const probe = await h.client.probe();
  assert.equal(probe.ready?.value, true);
  assert.deepEqual(await h.poolFiles(), [], 'nothing was created');
});
