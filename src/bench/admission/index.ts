// Admission as the API server does it, for manifests and for API writes alike.
export { admit, type AdmissionResult } from './admit.js';
export type { FieldError, FieldErrorType } from './field-error.js';
export { invalidMessage, invalidStatus, type InvalidStatus, type StatusCause } from './status.js';
export { applyDefaultStorageClass, defaultStorageClass } from './default-storage-class.js';
