// Kinds of resource names in requests and node allocatable: native (cpu, memory, ...), hugepages, extended (vendor.example/gpu).

/** Native names have no domain, or the kubernetes.io one. */
export function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

/** Extended resources (nvidia.com/gpu): advertised by nodes, counted in whole units, never overcommitted. */
export function isExtendedResource(name: string): boolean {
  return !isNativeResource(name) && !name.startsWith('requests.');
}

export function isHugePages(name: string): boolean {
  return name.startsWith('hugepages-');
}
