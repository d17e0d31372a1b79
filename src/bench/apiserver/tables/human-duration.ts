// Ages as the API server writes them into Table cells: about two significant figures, "45s", "3m20s", "5h", "12d".

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * A duration as apimachinery's duration.HumanDuration prints it. The thresholds are the
 * wire contract: kubectl prints the server's string as it is, so `kubectl get` shows "2m5s"
 * or "2m" only if this agrees with a real server. Up to 2 s in the future reads "0s"
 * (clock skew); further is "<invalid>". Integer division truncates as Go's does.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.trunc(hours / 24) % 365;
    const years = Math.trunc(hours / 24 / 365);
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** A timestamp field (a Date in the bench's store, an RFC 3339 string on the wire), or undefined. */
export function timestampMs(value: unknown): number | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.getTime();
  if (typeof value === 'string' && value !== '') {
    const t = Date.parse(value);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

/** How long ago `value` was, as the printers' translateTimestampSince: "<unknown>" for a missing or zero time. */
export function ageSince(value: unknown, now: Date): string {
  const t = timestampMs(value);
  // Go's zero time (0001-01-01) is what an unset metav1.Time holds.
  if (t === undefined || t <= Date.UTC(1, 0, 1)) return '<unknown>';
  return humanDuration(now.getTime() - t);
}
