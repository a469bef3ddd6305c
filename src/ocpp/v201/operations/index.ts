// Every operator operation's OCPP 2.0.1 form, one file each (operation-forms.ts); importing
// this file registers them all. Add a line for a new form.
import './clear-cache.js';
import './send-local-list.js';
import './get-local-list-version.js';
import './request-start-transaction.js';
import './request-stop-transaction.js';
import './reserve-now.js';
import './cancel-reservation.js';
import './data-transfer.js';
import './clear-charging-profile.js';
import './get-composite-schedule.js';
import './get-variables.js';
import './set-variables.js';
import './reset.js';
import './trigger-message.js';
import './change-availability.js';
import './unlock-connector.js';
