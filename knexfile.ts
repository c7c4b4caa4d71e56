import { loadConfig } from './src/common/config.js';
import { knexSettings } from './src/db/connect.js';

/** For the knex CLI; the service itself migrates with `npm run migrate` or at `npm start`. */
const config = loadConfig(process.env);

export default knexSettings(config.database);
