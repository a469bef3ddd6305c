-- The charger's firmware when it refused (BootNotification firmwareVersion, NULL when it sent
-- none): a refusal counts only while the charger runs the same firmware, so an update that
-- brings smart charging is tried again (docs/chargers.md "Chargers that say no").
ALTER TABLE ocpp_charger_refusals ADD COLUMN firmware_version TEXT;
