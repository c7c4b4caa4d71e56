/**
 * API versions (docs/reference.md section 19): the dates, the service's own changes and the
 * plugins', each resource's older shapes, and the conversions between a caller's version and
 * the latest, which the code is written for.
 */
export { FIRST_VERSION, isVersionDate, Versions, type ListedChange, type ListedVersion } from './catalog.js';
export type { Conversion } from './convert.js';
export type { OlderShape } from './shapes.js';
export { SERVICE_CHANGES, type ServiceChange } from './service.js';
