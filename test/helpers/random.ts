/** The tests' seeded generator: the simulator's (mulberry32), the same sequence for a seed on every machine. */
export { seededRandom } from '../../simulator/lib/rng.js';
