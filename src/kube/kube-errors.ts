// What an API failure means for the operator: wrong credentials, missing RBAC, or an API that is not there.
/** The API did not answer within the bound a CSI call may wait. */
export class KubeUnavailableError extends Error {
  override name = 'KubeUnavailableError';
}

/**
 * An API request the server answered with a status outside 2xx: `code` is the HTTP status and
 * `body` the answer's text (a Status object as JSON, usually), the two fields client-node's
 * ApiException carries, so the helpers below read either.
 */
export class KubeApiError extends Error {
  override name = 'KubeApiError';
  constructor(readonly code: number, readonly body: string, what: string) {
    super(`${what}: HTTP ${code}: ${statusMessageOf(body) ?? (body.slice(0, 200) || 'no body')}`);
  }
}

/** An answer larger than the transport keeps in memory; the request is dropped, not read on. */
export class KubeResponseTooLargeError extends Error {
  override name = 'KubeResponseTooLargeError';
}

/** The HTTP status of a failed request, or undefined when no response came (connection, timeout). */
export function apiStatus(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' && code >= 100 && code < 600 ? code : undefined;
}

/** True for a 404 answer, which several callers treat as "already gone". */
export function isNotFound(err: unknown): boolean {
  return apiStatus(err) === 404;
}

/** True for a 409 answer: a stale resourceVersion or a name taken. */
export function isConflict(err: unknown): boolean {
  return apiStatus(err) === 409;
}

/** The one-line reason an API call failed, meant for a log line or a start-up error. */
export function describeApiError(err: unknown, what: string): string {
  const status = apiStatus(err);
  const message = err instanceof Error ? err.message.split('\n')[0] ?? '' : String(err);
  if (status === 401) return `${what}: the API server rejected the credentials (401 Unauthorized); check the service account token or the kubeconfig's user`;
  if (status === 403) return `${what}: forbidden (403); the driver's roles lack this permission (docs/install.md, "Permissions", lists what each feature needs; node-loss handling needs deploy/components/node-loss)`;
  if (status !== undefined) return `${what}: the API server answered ${status}: ${statusMessage(err) ?? message}`;
  if (err instanceof KubeUnavailableError || err instanceof KubeResponseTooLargeError) return `${what}: ${err.message}`;
  return `${what}: the API server could not be reached: ${message}`;
}

/** The message of the Status object a failed request's body carries (the error's own message may hold only the status). */
function statusMessage(err: unknown): string | undefined {
  const body = (err as { body?: unknown }).body;
  return typeof body === 'string' ? statusMessageOf(body) : undefined;
}

function statusMessageOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : undefined;
  } catch {
    return undefined;
  }
}
