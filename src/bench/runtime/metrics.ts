// Counters the report prints: scheduling attempts, provisioning failures by gRPC code, driver calls.

export class BenchMetrics {
  readonly schedulingAttempts = new Map<string, number>();
  readonly provisioningFailures = new Map<string, number>();
  readonly driverCalls = new Map<string, number>();
  /** CreateVolume calls by claim (`namespace/name`), every node tried counting once. */
  readonly createVolumeCalls = new Map<string, number>();
  volumesProvisioned = 0;
  volumesDeleted = 0;
  mountChecksFailed = 0;
  mountChecksPassed = 0;

  countAttempt(podKey: string): void {
    this.schedulingAttempts.set(podKey, (this.schedulingAttempts.get(podKey) ?? 0) + 1);
  }

  countProvisioningFailure(code: string): void {
    this.provisioningFailures.set(code, (this.provisioningFailures.get(code) ?? 0) + 1);
  }

  countDriverCall(method: string): void {
    this.driverCalls.set(method, (this.driverCalls.get(method) ?? 0) + 1);
  }

  countCreateVolume(claimKey: string): void {
    this.countDriverCall('CreateVolume');
    this.createVolumeCalls.set(claimKey, (this.createVolumeCalls.get(claimKey) ?? 0) + 1);
  }

  totalAttempts(): number {
    let n = 0;
    for (const v of this.schedulingAttempts.values()) n += v;
    return n;
  }
}
