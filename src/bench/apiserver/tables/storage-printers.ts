// Tables of the storage kinds: PVs, claims, classes, CSI drivers and capacity objects, as the API server prints them.
import { column, ageOf, nameOf, NAME_COLUMN, AGE_COLUMN, type Printer } from './printer.js';
import { at, bool, list, rec, str, type Json } from './fields.js';
import { quantityString } from '../../../util/quantity.js';

const BETA_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';
const DEFAULT_CLASS_ANNOTATIONS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];

/** helper.GetAccessModesAsString: RWO, ROX, RWX, RWOP in that order, each once. */
export function accessModesText(modes: unknown[]): string {
  const has = (m: string): boolean => modes.includes(m);
  return [['ReadWriteOnce', 'RWO'], ['ReadOnlyMany', 'ROX'], ['ReadWriteMany', 'RWX'], ['ReadWriteOncePod', 'RWOP']]
    .filter(([mode]) => has(mode!)).map(([, short]) => short).join(',');
}

/** The class a PV or claim names: the beta annotation still wins over spec.storageClassName, as in the API server. */
function className(obj: Json): string {
  const beta = rec(obj, 'metadata', 'annotations')[BETA_CLASS_ANNOTATION];
  if (typeof beta === 'string') return beta;
  return str(obj, 'spec', 'storageClassName');
}

function deleting(obj: Json): boolean {
  const t = at(obj, 'metadata', 'deletionTimestamp');
  return t !== undefined && t !== null;
}

function unsetOr(v: string): string {
  return v === '' ? '<unset>' : v;
}

export const PV_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column('Capacity', 'string', 'The volume\'s storage capacity.'),
    column('Access Modes', 'string', 'The ways the volume can be mounted.'),
    column('Reclaim Policy', 'string', 'What happens to the volume when its claim is released.'),
    column('Status', 'string', 'The volume\'s phase.'),
    column('Claim', 'string', 'The claim bound to the volume, as namespace/name.'),
    column('StorageClass', 'string', 'The volume\'s storage class.'),
    column('VolumeAttributesClass', 'string', 'The volume\'s attributes class.'),
    column('Reason', 'string', 'Why the volume is in its phase.'),
    AGE_COLUMN,
    column('VolumeMode', 'string', 'Filesystem or Block.', 1),
  ],
  row(pv, now) {
    const ref = at(pv, 'spec', 'claimRef');
    const claim = ref === undefined || ref === null ? '' : `${str(ref, 'namespace')}/${str(ref, 'name')}`;
    return {
      cells: [
        nameOf(pv), quantityString(at(pv, 'spec', 'capacity', 'storage')), accessModesText(list(pv, 'spec', 'accessModes')),
        str(pv, 'spec', 'persistentVolumeReclaimPolicy'), deleting(pv) ? 'Terminating' : str(pv, 'status', 'phase'), claim,
        className(pv), unsetOr(str(pv, 'spec', 'volumeAttributesClassName')), str(pv, 'status', 'reason'), ageOf(pv, now),
        unsetOr(str(pv, 'spec', 'volumeMode')),
      ],
    };
  },
};

export const PVC_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'The claim\'s phase.'),
    column('Volume', 'string', 'The volume bound to the claim.'),
    column('Capacity', 'string', 'The bound volume\'s capacity.'),
    column('Access Modes', 'string', 'The bound volume\'s access modes.'),
    column('StorageClass', 'string', 'The claim\'s storage class.'),
    column('VolumeAttributesClass', 'string', 'The claim\'s attributes class.'),
    AGE_COLUMN,
    column('VolumeMode', 'string', 'Filesystem or Block.', 1),
  ],
  row(pvc, now) {
    const volume = str(pvc, 'spec', 'volumeName');
    // Capacity and modes come from status, and only once a volume is named: a pending claim shows blanks.
    const capacity = volume === '' ? '' : quantityString(at(pvc, 'status', 'capacity', 'storage'));
    const modes = volume === '' ? '' : accessModesText(list(pvc, 'status', 'accessModes'));
    return {
      cells: [
        nameOf(pvc), deleting(pvc) ? 'Terminating' : str(pvc, 'status', 'phase'), volume, capacity, modes,
        className(pvc), unsetOr(str(pvc, 'spec', 'volumeAttributesClassName')), ageOf(pvc, now), unsetOr(str(pvc, 'spec', 'volumeMode')),
      ],
    };
  },
};

export const STORAGE_CLASS_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column('Provisioner', 'string', 'The driver that provisions the class\'s volumes.'),
    column('ReclaimPolicy', 'string', 'The reclaim policy of volumes the class makes.'),
    column('VolumeBindingMode', 'string', 'When claims of the class are bound.'),
    column('AllowVolumeExpansion', 'string', 'Whether claims of the class may grow.'),
    AGE_COLUMN,
  ],
  row(sc, now) {
    const annotations = rec(sc, 'metadata', 'annotations');
    const isDefault = DEFAULT_CLASS_ANNOTATIONS.some((a) => annotations[a] === 'true');
    return {
      cells: [
        nameOf(sc) + (isDefault ? ' (default)' : ''), str(sc, 'provisioner'), str(sc, 'reclaimPolicy') || 'Delete',
        str(sc, 'volumeBindingMode') || 'Immediate', bool(sc, false, 'allowVolumeExpansion'), ageOf(sc, now),
      ],
    };
  },
};

export const CSI_DRIVER_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column('AttachRequired', 'boolean', 'Whether volumes need ControllerPublish before mounting.'),
    column('PodInfoOnMount', 'boolean', 'Whether the driver gets pod information at mount.'),
    column('StorageCapacity', 'boolean', 'Whether the scheduler checks the driver\'s published capacity.'),
    column('TokenRequests', 'string', 'Audiences of service account tokens the driver gets.'),
    column('RequiresRepublish', 'boolean', 'Whether mounts are republished periodically.'),
    column('Modes', 'string', 'Volume lifecycle modes the driver supports.'),
    AGE_COLUMN,
  ],
  row(d, now) {
    const tokens = at(d, 'spec', 'tokenRequests');
    const tokenText = Array.isArray(tokens) ? tokens.map((t) => str(t, 'audience')).join(',') : '<unset>';
    const modes = list(d, 'spec', 'volumeLifecycleModes').map(String).join(',') || '<none>';
    return {
      cells: [
        nameOf(d), bool(d, true, 'spec', 'attachRequired'), bool(d, false, 'spec', 'podInfoOnMount'), bool(d, false, 'spec', 'storageCapacity'),
        tokenText, bool(d, false, 'spec', 'requiresRepublish'), modes, ageOf(d, now),
      ],
    };
  },
};

/** No AGE column here: upstream's capacity printer has none. */
export const CSI_STORAGE_CAPACITY_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column('StorageClassName', 'string', 'The class this capacity is reported for.'),
    column('Capacity', 'string', 'Capacity available for new volumes of that class.'),
  ],
  row(c) {
    const capacity = at(c, 'capacity');
    return { cells: [nameOf(c), str(c, 'storageClassName'), capacity === undefined || capacity === null ? '<unset>' : quantityString(capacity)] };
  },
};
