"""End-to-end encryption of a store's remote: this device's key and the recipients (``keys``), the sealed
form of one bundle of commits (``envelope``), and the ciphertext repository that is all the remote ever
holds (``vault``). The store stays plaintext; ``memsync.store.sealed`` joins the two."""
