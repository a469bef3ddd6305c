-- The public key an OCPP 2.0.1 station sends with a signed value (SignedMeterValueType.publicKey,
-- base64, up to 2,500 characters), kept as sent (NULL: none sent, or a 1.6 value). Never used
-- to verify (a station could send any key with a forged document): it is shown as a hint when
-- no key is configured for the connector (key_unknown), so the installer can compare it with
-- the meter's label and configure it (docs/chargers.md "Signed meter values").
ALTER TABLE ocpp_signed_values ADD COLUMN station_public_key TEXT;
