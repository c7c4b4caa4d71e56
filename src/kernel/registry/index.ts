/**
 * The plugins, loaded: every file of plugins/ read, checked and compiled once at start-up into
 * the resources the rest of the service serves (schemas, kinds, filters, search, expansions).
 */
export { WEBHOOKS_SCOPE, loadRegistry, type CompiledResource, type Registry } from './registry.js';
