import { reservePath } from 'workspace-api/plugin';

/** Part of the contract, not built yet: every method on /v1/projects and below answers 501. */
export default reservePath({
  name: 'project',
  path: '/projects',
  description: 'Projects are planned; every request answers 501 not_implemented.',
});
