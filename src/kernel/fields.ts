/**
 * Where plugins written before `workspace-api/plugin` import the field helpers from
 * (`../src/kernel/fields.js`): deprecated since 0.1.0 (boot warns once per plugin), kept until
 * 0.4.0 at the soonest. The kernel's own code imports ./model/.
 */
export * from './model/fields.js';
