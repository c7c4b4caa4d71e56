import { setUpBackend, tearDownBackend } from './backend.js';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    await setUpBackend();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await tearDownBackend();
  },
};
