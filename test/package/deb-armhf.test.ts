// metergate_<version>_armhf.deb on armhf (qemu-user-static); see on-arch.ts.
import { definePackageTests } from './on-arch.js';

definePackageTests('armhf');
