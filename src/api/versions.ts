import { caller, type Route } from '../http/route.js';
import { ref } from '../openapi/operation.js';
import type { Versions } from '../versions/index.js';

/** GET /v1/versions (docs/reference.md section 19): every version with its changes, the latest, and the calling key's. */
export function versionRoutes(versions: Versions): Route[] {
  return [
    {
      method: 'get',
      path: '/versions',
      operationId: 'listVersions',
      summary: 'List the API versions',
      description:
        'Every version of the API, oldest first, each with what changed in it (`kind`: field_renamed, field_removed, field_added, type_changed, value_changed or custom). A request is answered in the version its `Api-Version` header names, or else the one its key is pinned to (`key_version`).',
      tag: 'meta',
      access: null,
      success: { status: 200, description: 'The versions.', schema: ref('VersionList') },
      errors: ['invalid_parameter'],
      handle: (input) => ({ body: { data: versions.listing(), latest: versions.latest, key_version: caller(input).key.api_version } }),
    },
  ];
}
