/** `npm run simulator`: the simulator on its own. */
import { runStandalone } from './standalone.js';

void runStandalone();
