// metergate_<version>_arm64.deb on arm64 (qemu-user-static); see on-arch.ts.
import { definePackageTests } from './on-arch.js';

definePackageTests('arm64');
