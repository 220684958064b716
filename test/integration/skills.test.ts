// The skills repository on the embedded SQLite store (the suite is test/helpers/skills-suite.ts; the
// same suite runs on PostgreSQL in skills-postgres.test.ts).
import { skillsSuite } from '../helpers/skills-suite.ts';

skillsSuite(() => ({}));
