/// Private keys made by OpenSSL 3.0 (the command beside each), kept as text so the tests need no
/// OpenSSL: an APNs key must be P-256, and these are what people paste by mistake.
enum OpenSSLKeys {
    /// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:secp256k1`
    static let secp256k1 = """
        -----BEGIN PRIVATE KEY-----
        MIGEAgEAMBAGByqGSM49AgEGBSuBBAAKBG0wawIBAQQg+mwfKv8aMylfwBGNCGWt
        zmAp8yihLqigOuI8t/Xr4OqhRANCAATk1n7kxZnhX6/qk5ty0rDAlTo5+J6KORlq
        dGmjfh2byAYHg40BrMDhSZpHH/i7AWNuYDFVEWHK/U8vI9F4SqIk
        -----END PRIVATE KEY-----
        """

    /// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:brainpoolP256r1`
    static let brainpoolP256r1 = """
        -----BEGIN PRIVATE KEY-----
        MIGIAgEAMBQGByqGSM49AgEGCSskAwMCCAEBBwRtMGsCAQEEIAyuj9ANrt8LwMzI
        GqKjt31/6o6z4n/IoaAAvXDpJ4zGoUQDQgAEYspxMKvb6C4fB8HkoOQQmT2jbX/o
        8Bb2SkUspKqaaI2H/A+r0l6HgoNGLuAY5VET+rubV25QErDC49N6tFrABw==
        -----END PRIVATE KEY-----
        """

    /// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1`
    static let p256FromOpenSSL = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgXG7NJSe2MmqFG8Zc
        WUigTYI37GqGi15vVMmehKIhV02hRANCAARVRHYBYtf/Z4agYs6iJ6G2lb8VQRYw
        BcMtcL4jUD9r+/AkXtaUoTJ+lvYMlnrQD2c9Pt6Rk54fUWRjAvERqeic
        -----END PRIVATE KEY-----
        """

    /// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -pkeyopt ec_param_enc:explicit`
    static let explicitP256 = """
        -----BEGIN PRIVATE KEY-----
        MIIBeQIBADCCAQMGByqGSM49AgEwgfcCAQEwLAYHKoZIzj0BAQIhAP////8AAAAB
        AAAAAAAAAAAAAAAA////////////////MFsEIP////8AAAABAAAAAAAAAAAAAAAA
        ///////////////8BCBaxjXYqjqT57PrvVV2mIa8ZR0GsMxTsPY7zjw+J9JgSwMV
        AMSdNgiG5wSTamZ44ROdJreBn36QBEEEaxfR8uEsQkf4vOblY6RA8ncDfYEt6zOg
        9KE5RdiYwpZP40Li/hp/m47n60p8D54WK84zV2sxXs7LtkBoN79R9QIhAP////8A
        AAAA//////////+85vqtpxeehPO5ysL8YyVRAgEBBG0wawIBAQQgqbZp5MqDFg5D
        xGMB+cI1qAT3r19fRk07t5wL/Cv4NoKhRANCAAS05qzP2o6d7kTu1Ng1TcQIbZoj
        fROq2hGcf1c/zPFZo9+QoOPQAsJi/Tn1i66DG3XHS6/oUFl9F3SJsSOah206
        -----END PRIVATE KEY-----
        """

    /// `openssl genpkey -algorithm ED25519`
    static let ed25519 = """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VwBCIEIH+UjRrIf+h6IodpXed8Qf9bbcj84SB39GNrYlYiyrtY
        -----END PRIVATE KEY-----
        """

    /// The secp256k1 key above as OpenSSL writes it in SEC1 (`openssl ec -outform DER`, naming its curve in
    /// `[0]`), wrapped in a PKCS#8 info that says P-256: the two descriptions disagree.
    static let conflictingCurves = """
        -----BEGIN PRIVATE KEY-----
        MIGQAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHYwdAIBAQQg+mwfKv8aMylfwBGN
        CGWtzmAp8yihLqigOuI8t/Xr4OqgBwYFK4EEAAqhRANCAATk1n7kxZnhX6/qk5ty
        0rDAlTo5+J6KORlqdGmjfh2byAYHg40BrMDhSZpHH/i7AWNuYDFVEWHK/U8vI9F4
        SqIk
        -----END PRIVATE KEY-----
        """
}
