// metergate_<version>_amd64.deb on amd64 (this machine); see on-arch.ts.
import { definePackageTests } from './on-arch.js';

definePackageTests('amd64');
