/** Facts of the HTTP interface that the request path enforces and the documents state. */

/** The largest body read, after decoding. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** A partial update is a JSON merge patch of the object, so its media type is accepted too. */
export const JSON_TYPES = ['application/json', 'application/merge-patch+json'];

/** Content-Encoding values a body may come in (the limit counts decoded bytes). */
export const BODY_ENCODINGS = ['identity', 'gzip', 'deflate', 'br'];

/** A client's own X-Request-Id is kept if it is sane (short, printable, no separators that break logs). */
export const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;
