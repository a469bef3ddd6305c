// The amd64 package on Debian 12 (bookworm) booted with systemd as PID 1; see boot.ts.
import { defineBootTests } from './boot.js';

defineBootTests('bookworm');
