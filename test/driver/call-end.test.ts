// When a call is over, and why: a cancellation near the client's deadline is that deadline (the driver's copy of it runs late by the call's transit), an earlier one the client giving up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { status, type ServerUnaryCall } from '@grpc/grpc-js';
import { callEnd } from '../../src/driver/rpc/call-deadline.js';
import { CsiError } from '../../src/driver/rpc/errors.js';

/** A server call as the adapter sees it: a deadline, and a 'cancelled' event when the client's side ends. */
function fakeCall(deadlineMs: number): ServerUnaryCall<unknown, unknown> & EventEmitter {
  const call = new EventEmitter() as ServerUnaryCall<unknown, unknown> & EventEmitter;
  Object.assign(call, { getDeadline: () => Date.now() + deadlineMs });
  return call;
}

function reason(signal: AbortSignal): number | undefined {
  return signal.reason instanceof CsiError ? signal.reason.code : undefined;
}

/** The code a call with a `deadlineMs` deadline ends with when its client's side ends `afterMs` into it. */
function cancelledAfter(deadlineMs: number, afterMs: number): number | undefined {
  const call = fakeCall(deadlineMs);
  const end = callEnd(call);
  const realNow = Date.now;
  try {
    Date.now = () => realNow() + afterMs;
    call.emit('cancelled');
  } finally {
    Date.now = realNow;
    end.dispose();
  }
  return reason(end.signal);
}

test('a cancellation in the last quarter of a 3 s call, 500 ms before the driver\'s copy of its deadline, is the deadline', () => {
  assert.equal(cancelledAfter(3000, 2500), status.DEADLINE_EXCEEDED);
});

test('a cancellation 2 s before a 3 s call\'s deadline is the client giving up', () => {
  assert.equal(cancelledAfter(3000, 1000), status.CANCELLED);
});

test('a call of ten minutes cancelled 5 s before its deadline is a cancellation: the margin stops at a second', () => {
  assert.equal(cancelledAfter(600_000, 595_000), status.CANCELLED);
});

test('without a client deadline a cancellation is always one', () => {
  const call = new EventEmitter() as ServerUnaryCall<unknown, unknown> & EventEmitter;
  Object.assign(call, { getDeadline: () => Infinity });
  const end = callEnd(call);
  call.emit('cancelled');
  end.dispose();
  assert.equal(reason(end.signal), status.CANCELLED);
});
