import { summarizeProfiles } from './lib/cpu-profile.js';
console.log(JSON.stringify(summarizeProfiles(process.argv[2] ?? '/tmp/pgprof', 25), null, 1));
