// This node's profile label, followed through a watch of its own Node object (a metadata.name field selector): no read per round.
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../../../kube/kube-client.js';
import { Informer } from '../../../kube/informer.js';

/** What the cache keeps of the Node: the label's value ('' and absent alike: undefined). */
interface Held {
  value: string | undefined;
}

export class NodeLabelCache {
  private readonly informer: Informer<V1Node, Held>;

  constructor(kube: KubeClient, private readonly nodeId: string, labelKey: string) {
    const fieldSelector = `metadata.name=${nodeId}`;
    this.informer = new Informer(kube, {
      what: `nodes (${nodeId})`,
      list: (a, page) => a.core.listNode({ fieldSelector, ...page }),
      watch: (a, from, onEvent) => a.core.watchNode({ fieldSelector, ...from }, onEvent),
    }, (n) => {
      const v = n.metadata?.labels?.[labelKey];
      return { value: v === undefined || v === '' ? undefined : v };
    });
  }

  start(onChange: () => void): void {
    this.informer.onChange(onChange);
    this.informer.start();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  /** The label's value now; throws, saying why, while the Node is not known (not listed yet, the list failing, or no such Node). */
  value(): string | undefined {
    if (!this.informer.synced) throw new Error(this.informer.lastError ?? `node ${this.nodeId}: not read yet`);
    const held = this.informer.get(this.nodeId);
    if (held === undefined) throw new Error(`node ${this.nodeId}: no such Node object`);
    return held.value;
  }
}
