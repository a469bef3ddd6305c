// The amd64 package on Debian 13 (trixie) booted with systemd as PID 1; see boot.ts.
import { defineBootTests } from './boot.js';

defineBootTests('trixie');
