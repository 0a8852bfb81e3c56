/// Keycloak events written for these tests, in the admin REST API's representation
/// (`GET /admin/realms/{realm}/events` answers an array of `EventRepresentation`). Realm `acme`,
/// times in December 2026, addresses from the documentation ranges (RFC 5737, RFC 3849). The
/// import pipeline's tests reuse them.
enum KeycloakFixtures {
    /// 35 events of 2026-12-03, **newest first** as the admin API orders them, pretty-printed
    /// (2-space indent, as `jq .` writes it):
    ///
    /// - a credential-stuffing run from 203.0.113.77 (02:11–02:12): one attempt at each of 14
    ///   usernames, 8 of them accounts (`invalid_user_credentials`), 5 not (`user_not_found`),
    ///   and one, `grace.lee`, reused the password (`LOGIN`, then its `CODE_TO_TOKEN`); then two
    ///   more failures at `alice.nguyen` and a `user_temporarily_disabled`, the brute-force
    ///   detector refusing the third;
    /// - `maria.lopez` from 198.51.100.23 mistyping once, then `LOGIN`, `CODE_TO_TOKEN`,
    ///   `REFRESH_TOKEN`, `UPDATE_PASSWORD`, `LOGOUT`;
    /// - `tom.becker` from 2001:db8:4:12::3a failing his OTP (`invalid_user_credentials` with
    ///   `credential_type: otp`), then `LOGIN` with it and `CODE_TO_TOKEN`;
    /// - `nadia.rahman` registering (`REGISTER`, `LOGIN`); `kemal.yilmaz` resetting his password
    ///   by email (`SEND_RESET_PASSWORD`, `RESET_PASSWORD`, `UPDATE_PASSWORD`);
    /// - a service account's `CLIENT_LOGIN` and `INTROSPECT_TOKEN`, and an `expired_code` login
    ///   error.
    ///
    /// Read by ``KeycloakEventParser``: 27 events (17 from the attacker's address) and 8 skipped
    /// (7 not authentication, 1 login error without a credential check).
    static let stuffingAndHonest = #"""
        [
          {
            "id": "a5b0e526-320b-43f8-a8be-3b07662f286b",
            "time": 1796312832500,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "ipAddress": "198.51.100.77",
            "error": "expired_code",
            "details": {
              "restart_after_timeout": "true",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "8c1f6387-11cb-4ea7-a5fc-684aadb21095"
            }
          },
          {
            "id": "3bbb492b-9924-4b8b-a575-0c2b561f8bfe",
            "time": 1796310000091,
            "type": "INTROSPECT_TOKEN",
            "realmId": "acme",
            "clientId": "billing-service",
            "ipAddress": "10.20.0.5",
            "details": {}
          },
          {
            "id": "9f93693f-6f00-47c4-a4fd-02f6850567c2",
            "time": 1796310000004,
            "type": "CLIENT_LOGIN",
            "realmId": "acme",
            "clientId": "billing-service",
            "userId": "9e5cf6e9-9255-4248-a771-f894f2e36355",
            "ipAddress": "10.20.0.5",
            "details": {
              "grant_type": "client_credentials",
              "scope": "profile email",
              "client_auth_method": "client-secret",
              "token_id": "975cef7a-2765-4f91-abb5-3283ce107503",
              "username": "service-account-billing-service"
            }
          },
          {
            "id": "7f60b9fa-1f12-4a78-a9f9-14845377899a",
            "time": 1796307902009,
            "type": "UPDATE_PASSWORD",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "2475263c-7854-4014-aded-c86a9f4fb02b",
            "ipAddress": "198.51.100.201",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "733c6676-4dbd-4e02-aecb-9e6853e81536",
              "username": "kemal.yilmaz"
            }
          },
          {
            "id": "79dcbc81-82a8-4712-a68c-8f90069a306f",
            "time": 1796307880560,
            "type": "RESET_PASSWORD",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "2475263c-7854-4014-aded-c86a9f4fb02b",
            "ipAddress": "198.51.100.201",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "f1f02f49-c500-49ab-af3e-41445a789b32",
              "username": "kemal.yilmaz@acme.example"
            }
          },
          {
            "id": "a5721c6a-58d6-4944-a573-e7bb0d26efa0",
            "time": 1796307723012,
            "type": "SEND_RESET_PASSWORD",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "2475263c-7854-4014-aded-c86a9f4fb02b",
            "ipAddress": "198.51.100.201",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "12cc86e3-e344-41c3-a3ac-4f141b2b980e",
              "email": "kemal.yilmaz@acme.example",
              "username": "kemal.yilmaz"
            }
          },
          {
            "id": "f57585ce-039e-457a-a041-f10e325abdec",
            "time": 1796303144388,
            "type": "LOGIN",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "96060250-ea3e-4f73-a84c-1884c88f63d6",
            "sessionId": "22a60b44-ef5f-431c-a8fd-b92dab266981",
            "ipAddress": "192.0.2.140",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "ce918208-8520-4f0c-a606-799cced8c284",
              "username": "nadia.rahman",
              "consent": "no_consent_required"
            }
          },
          {
            "id": "63f1bbbc-697b-45cb-a1f8-c04a4e564cbf",
            "time": 1796303144210,
            "type": "REGISTER",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "96060250-ea3e-4f73-a84c-1884c88f63d6",
            "sessionId": "22a60b44-ef5f-431c-a8fd-b92dab266981",
            "ipAddress": "192.0.2.140",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "register_method": "form",
              "last_name": "Rahman",
              "redirect_uri": "https://portal.acme.example/callback",
              "first_name": "Nadia",
              "code_id": "22a60b44-ef5f-431c-a8fd-b92dab266981",
              "email": "nadia.rahman@example.org",
              "username": "nadia.rahman"
            }
          },
          {
            "id": "6af38f6c-159d-4a38-aa6a-03b381356bc5",
            "time": 1796297424150,
            "type": "CODE_TO_TOKEN",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "44becdce-f4d4-45ec-abe4-0e7fc07991d4",
            "sessionId": "ed1ba5c8-c4ff-464e-a304-3fca9543c6c3",
            "ipAddress": "2001:db8:4:12::3a",
            "details": {
              "token_id": "219763c5-9682-4074-a915-72d53911c9b0",
              "grant_type": "authorization_code",
              "refresh_token_type": "Refresh",
              "scope": "openid profile email",
              "refresh_token_id": "b14ab8e9-e041-4118-a91f-77c9f551abfd",
              "code_id": "ed1ba5c8-c4ff-464e-a304-3fca9543c6c3",
              "client_auth_method": "client-secret"
            }
          },
          {
            "id": "8bb9c912-2286-4c53-a000-e394b870e4e1",
            "time": 1796297424077,
            "type": "LOGIN",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "44becdce-f4d4-45ec-abe4-0e7fc07991d4",
            "sessionId": "ed1ba5c8-c4ff-464e-a304-3fca9543c6c3",
            "ipAddress": "2001:db8:4:12::3a",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "b093e3b4-7df2-4c58-ac56-dc87f32efa03",
              "username": "tom.becker",
              "consent": "no_consent_required",
              "credential_type": "otp"
            }
          },
          {
            "id": "aa220078-503d-486b-a150-4585279e6933",
            "time": 1796297402901,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "44becdce-f4d4-45ec-abe4-0e7fc07991d4",
            "ipAddress": "2001:db8:4:12::3a",
            "error": "invalid_user_credentials",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "5b74c718-a2aa-416a-a1f6-192bab215122",
              "username": "tom.becker",
              "credential_type": "otp"
            }
          },
          {
            "id": "0b6ec6f3-9efe-4fda-aeed-fcfc3f724926",
            "time": 1796292137330,
            "type": "LOGOUT",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "a9f5307c-8ece-48b0-af29-a9f1ced66b44",
            "sessionId": "b76dc0c3-b078-42db-a03e-53cf192f09a9",
            "ipAddress": "198.51.100.23",
            "details": {
              "redirect_uri": "https://portal.acme.example/"
            }
          },
          {
            "id": "32e4034c-cb34-4cea-ac31-b9301543c8ef",
            "time": 1796290890005,
            "type": "UPDATE_PASSWORD",
            "realmId": "acme",
            "clientId": "account-console",
            "userId": "a9f5307c-8ece-48b0-af29-a9f1ced66b44",
            "sessionId": "b76dc0c3-b078-42db-a03e-53cf192f09a9",
            "ipAddress": "198.51.100.23",
            "details": {
              "auth_method": "openid-connect",
              "custom_required_action": "UPDATE_PASSWORD",
              "username": "maria.lopez"
            }
          },
          {
            "id": "d61b5e08-eea3-4d4e-abed-5b6594a4d29c",
            "time": 1796289549702,
            "type": "REFRESH_TOKEN",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "a9f5307c-8ece-48b0-af29-a9f1ced66b44",
            "sessionId": "b76dc0c3-b078-42db-a03e-53cf192f09a9",
            "ipAddress": "198.51.100.23",
            "details": {
              "token_id": "db4c9492-bf5f-45e2-a1d0-6d9c18bee074",
              "refresh_token_type": "Refresh",
              "scope": "openid profile email",
              "updated_refresh_token_id": "ea9e7ab5-730b-49dc-a577-c324694baad6",
              "refresh_token_id": "7383d496-000e-45d0-a798-5d060397a31d",
              "client_auth_method": "client-secret"
            }
          },
          {
            "id": "5ec0c260-7f98-40a6-a73c-49ea44371ff3",
            "time": 1796289249702,
            "type": "CODE_TO_TOKEN",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "a9f5307c-8ece-48b0-af29-a9f1ced66b44",
            "sessionId": "b76dc0c3-b078-42db-a03e-53cf192f09a9",
            "ipAddress": "198.51.100.23",
            "details": {
              "token_id": "ba5c875c-d7aa-4208-acff-b0f0f79edc82",
              "grant_type": "authorization_code",
              "refresh_token_type": "Refresh",
              "scope": "openid profile email",
              "refresh_token_id": "a60741f3-1075-45b0-a0ac-debe7aa95416",
              "code_id": "b76dc0c3-b078-42db-a03e-53cf192f09a9",
              "client_auth_method": "client-secret"
            }
          },
          {
            "id": "2edc49c1-f71b-4135-ac06-43b173f29c6a",
            "time": 1796289249640,
            "type": "LOGIN",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "a9f5307c-8ece-48b0-af29-a9f1ced66b44",
            "sessionId": "b76dc0c3-b078-42db-a03e-53cf192f09a9",
            "ipAddress": "198.51.100.23",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "4242c225-83e2-465a-a654-0600c8fb4456",
              "username": "maria.lopez",
              "consent": "no_consent_required"
            }
          },
          {
            "id": "cfd8c364-eab4-4bd6-a528-ea79511070a7",
            "time": 1796289240118,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "a9f5307c-8ece-48b0-af29-a9f1ced66b44",
            "ipAddress": "198.51.100.23",
            "error": "invalid_user_credentials",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "4a41f8e4-d4d6-4278-a89b-5123e842997d",
              "username": "maria.lopez"
            }
          },
          {
            "id": "7f45b096-d380-4b73-a446-ab8c82e26123",
            "time": 1796263912512,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "f38b2ffc-80a4-4f5a-a1c9-bc701e7ea419",
            "ipAddress": "203.0.113.77",
            "error": "user_temporarily_disabled",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "7776c655-7c4e-4248-a151-5fff42969a50",
              "username": "alice.nguyen"
            }
          },
          {
            "id": "33288e16-ebe8-4fa9-ac24-c1ae7d510557",
            "time": 1796263910590,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "f38b2ffc-80a4-4f5a-a1c9-bc701e7ea419",
            "ipAddress": "203.0.113.77",
            "error": "invalid_user_credentials",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "ed4d19b8-85dc-4a68-adb5-4088754e64f4",
              "username": "alice.nguyen"
            }
          },
          {
            "id": "f5ee8c72-98e6-45b7-a1cd-7be8a7d83351",
            "time": 1796263908879,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "f38b2ffc-80a4-4f5a-a1c9-bc701e7ea419",
            "ipAddress": "203.0.113.77",
            "error": "invalid_user_credentials",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "265c28ea-0879-4955-a25f-f87c44df8a13",
              "username": "alice.nguyen"
            }
          },
          {
            "id": "d4f398ee-4b5c-4a95-a3d9-18086edd77d8",
            "time": 1796263907379,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "ipAddress": "203.0.113.77",
            "error": "user_not_found",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "66e61127-e26b-424a-ae0d-8d877a98b9ac",
              "username": "test"
            }
          },
          {
            "id": "b2c55523-807c-4e30-a598-d0dbccbfd2ec",
            "time": 1796263905298,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "ipAddress": "203.0.113.77",
            "error": "user_not_found",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "8c53765f-4ec0-4954-af8b-2a6aab74fe57",
              "username": "admin"
            }
          },
          {
            "id": "66eebc57-8f4e-4b4f-a041-f5ee8bae8e66",
            "time": 1796263902054,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "b6eafff5-782a-4e6b-ac9f-21df74f09af5",
            "ipAddress": "203.0.113.77",
            "error": "invalid_user_credentials",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "fa97002c-fcba-4167-a5a9-ca5fedf165da",
              "username": "lena.fischer"
            }
          },
          {
            "id": "b3618e1c-a06d-4a69-af3c-42b2e2cbbb93",
            "time": 1796263899547,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "2475263c-7854-4014-aded-c86a9f4fb02b",
            "ipAddress": "203.0.113.77",
            "error": "invalid_user_credentials",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "d9814559-3a9a-4a39-a261-e34a7b6bc3c6",
              "username": "kemal.yilmaz"
            }
          },
          {
            "id": "b7a1774f-1a42-421e-aba4-c70ee306f0c4",
            "time": 1796263895877,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "d1711cbd-2106-419e-a40d-31b5397a7623",
            "ipAddress": "203.0.113.77",
            "error": "invalid_user_credentials",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "85f184e0-b464-4554-a675-299b0c83e786",
              "username": "jonas.berg"
            }
          },
          {
            "id": "93550840-067f-4cfc-ae1f-d3d9849acfb5",
            "time": 1796263892944,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "ipAddress": "203.0.113.77",
            "error": "user_not_found",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "8350a73f-7aac-419f-ab75-9e0fed1d9d16",
              "username": "ines.moreau"
            }
          },
          {
            "id": "90624fe3-6b82-46c9-a82f-b0f1423674a6",
            "time": 1796263890748,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "e01c683e-99a4-4df0-ade3-a361c0099eba",
            "ipAddress": "203.0.113.77",
            "error": "invalid_user_credentials",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "864fa3f3-eab0-4e9b-a5ed-0de47db4304d",
              "username": "hiro.tanaka"
            }
          },
          {
            "id": "cd73de00-81a0-4a05-ace9-da661dcf884c",
            "time": 1796263887450,
            "type": "CODE_TO_TOKEN",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "b766ff10-b437-4db5-a511-49bbe060a724",
            "sessionId": "24114258-751b-4c83-a9a0-47dc4ac87fc0",
            "ipAddress": "203.0.113.77",
            "details": {
              "token_id": "e41686cd-6616-4227-a737-14726c167229",
              "grant_type": "authorization_code",
              "refresh_token_type": "Refresh",
              "scope": "openid profile email",
              "refresh_token_id": "de0279e1-7f9a-4098-adf0-5f2595f19a51",
              "code_id": "24114258-751b-4c83-a9a0-47dc4ac87fc0",
              "client_auth_method": "client-secret"
            }
          },
          {
            "id": "7608d942-5d11-4a9d-ae6c-9992b5fb12e0",
            "time": 1796263887389,
            "type": "LOGIN",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "b766ff10-b437-4db5-a511-49bbe060a724",
            "sessionId": "24114258-751b-4c83-a9a0-47dc4ac87fc0",
            "ipAddress": "203.0.113.77",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "d9090b89-0655-4096-af1a-8a1d93d20470",
              "username": "grace.lee",
              "consent": "no_consent_required"
            }
          },
          {
            "id": "89be9c1c-8eb5-440f-a6f4-488157241955",
            "time": 1796263884767,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "ipAddress": "203.0.113.77",
            "error": "user_not_found",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "b91dddd9-1389-4372-a341-738c837a7935",
              "username": "farid.haddad"
            }
          },
          {
            "id": "bef7e268-ffe9-46ab-a058-1ccace1d62e0",
            "time": 1796263880982,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "59001ac9-4063-49bc-a5b0-0a2d35d14880",
            "ipAddress": "203.0.113.77",
            "error": "invalid_user_credentials",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "5b4c8012-ede7-4d0c-afb8-8309fadb8908",
              "username": "emma.schulz"
            }
          },
          {
            "id": "5071950e-adec-4f11-ad83-6e77af67d461",
            "time": 1796263877934,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "ipAddress": "203.0.113.77",
            "error": "user_not_found",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "e4163207-d094-4996-a2f0-ee99731c9452",
              "username": "d.kowalski"
            }
          },
          {
            "id": "1919e93a-d117-45ad-a988-93101c593af5",
            "time": 1796263875623,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "70eb9a0a-9626-4ae6-a5e8-18fac0433cbd",
            "ipAddress": "203.0.113.77",
            "error": "invalid_user_credentials",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "14aa4e71-9d3c-4dec-a0a6-1f933d6c51e3",
              "username": "carla.rossi"
            }
          },
          {
            "id": "7dabe929-c4a3-44bf-a6cd-75e9bb049a79",
            "time": 1796263872149,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "6bad6be2-8e7a-46e9-af19-950499dd251d",
            "ipAddress": "203.0.113.77",
            "error": "invalid_user_credentials",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "d7a7a3cc-8c3d-4f16-a293-de8fc88b2875",
              "username": "bob.okafor"
            }
          },
          {
            "id": "e5121482-3929-4d22-a255-accb1a466884",
            "time": 1796263869412,
            "type": "LOGIN_ERROR",
            "realmId": "acme",
            "clientId": "acme-portal",
            "userId": "f38b2ffc-80a4-4f5a-a1c9-bc701e7ea419",
            "ipAddress": "203.0.113.77",
            "error": "invalid_user_credentials",
            "details": {
              "auth_method": "openid-connect",
              "auth_type": "code",
              "redirect_uri": "https://portal.acme.example/callback",
              "code_id": "f3f49249-dc28-4f90-a5ae-c7978306d03b",
              "username": "alice.nguyen"
            }
          }
        ]
        """#

    /// The attacker's address in ``stuffingAndHonest``.
    static let stufferAddress = "203.0.113.77"
    /// The usernames the attacker tried in ``stuffingAndHonest``, in order.
    static let stuffedUsernames = [
        "alice.nguyen",
        "bob.okafor",
        "carla.rossi",
        "d.kowalski",
        "emma.schulz",
        "farid.haddad",
        "grace.lee",
        "hiro.tanaka",
        "ines.moreau",
        "jonas.berg",
        "kemal.yilmaz",
        "lena.fischer",
        "admin",
        "test"
    ]
    /// `userId` of the accounts in ``stuffingAndHonest``.
    static let userIDs: [String: String] = [
        "alice.nguyen": "f38b2ffc-80a4-4f5a-a1c9-bc701e7ea419",
        "bob.okafor": "6bad6be2-8e7a-46e9-af19-950499dd251d",
        "carla.rossi": "70eb9a0a-9626-4ae6-a5e8-18fac0433cbd",
        "emma.schulz": "59001ac9-4063-49bc-a5b0-0a2d35d14880",
        "grace.lee": "b766ff10-b437-4db5-a511-49bbe060a724",
        "hiro.tanaka": "e01c683e-99a4-4df0-ade3-a361c0099eba",
        "jonas.berg": "d1711cbd-2106-419e-a40d-31b5397a7623",
        "kemal.yilmaz": "2475263c-7854-4014-aded-c86a9f4fb02b",
        "lena.fischer": "b6eafff5-782a-4e6b-ac9f-21df74f09af5",
        "maria.lopez": "a9f5307c-8ece-48b0-af29-a9f1ced66b44",
        "tom.becker": "44becdce-f4d4-45ec-abe4-0e7fc07991d4",
        "nadia.rahman": "96060250-ea3e-4f73-a84c-1884c88f63d6",
        "service-account-billing-service": "9e5cf6e9-9255-4248-a771-f894f2e36355"
    ]

    // MARK: One event per mapping row (compact, as the admin API writes them)

    /// `maria.lopez` signing in with her password, 2026-12-03T09:14:09.640Z.
    static let login =
        #"{"id":"7d0f52a4-1c53-4f6e-9d3a-5b2e8c7f1a09","time":1796289249640,"type":"LOGIN","realmId":"acme","clientId":"acme-portal","userId":"5b8e2f61-0c4d-4a7e-b1f3-9d6a2c0e8b47","sessionId":"e3a9c1d2-7b64-4f05-8e1a-2c9d3b7f6a50","ipAddress":"198.51.100.23","details":{"auth_method":"openid-connect","auth_type":"code","redirect_uri":"https://portal.acme.example/callback","consent":"no_consent_required","code_id":"e3a9c1d2-7b64-4f05-8e1a-2c9d3b7f6a50","username":"maria.lopez"}}"#
    /// `tom.becker` signing in with a password and an OTP.
    static let loginWithOTP =
        #"{"time":1796297424077,"type":"LOGIN","realmId":"acme","clientId":"acme-portal","userId":"0c6b1e9a-3f27-4d58-a2e4-71b9f0d3c865","sessionId":"9a4e7c21-5d30-4b8f-b6e2-0f1c8d3a7e94","ipAddress":"2001:DB8:4:12:0:0:0:3A","details":{"auth_method":"openid-connect","auth_type":"code","redirect_uri":"https://portal.acme.example/callback","credential_type":"otp","code_id":"9a4e7c21-5d30-4b8f-b6e2-0f1c8d3a7e94","username":"tom.becker"}}"#
    /// `maria.lopez` signing in through the realm's Google identity provider.
    static let brokeredLogin =
        #"{"time":1796289300000,"type":"LOGIN","realmId":"acme","clientId":"acme-portal","userId":"5b8e2f61-0c4d-4a7e-b1f3-9d6a2c0e8b47","ipAddress":"198.51.100.23","details":{"auth_method":"openid-connect","identity_provider":"google","identity_provider_identity":"maria.lopez@gmail.example","redirect_uri":"https://portal.acme.example/callback","username":"maria.lopez"}}"#
    /// A wrong password for an account (`userId` known, `details.username` as typed).
    static let invalidPassword =
        #"{"time":1796289240118,"type":"LOGIN_ERROR","realmId":"acme","clientId":"acme-portal","userId":"5b8e2f61-0c4d-4a7e-b1f3-9d6a2c0e8b47","ipAddress":"198.51.100.23","error":"invalid_user_credentials","details":{"auth_method":"openid-connect","auth_type":"code","redirect_uri":"https://portal.acme.example/callback","code_id":"1f7d3b90-6e2a-4c85-9a1d-e4b0c7f2a638","username":"Maria.Lopez"}}"#
    /// A username with no account: no `userId`.
    static let unknownUser =
        #"{"time":1796271071000,"type":"LOGIN_ERROR","realmId":"acme","clientId":"acme-portal","ipAddress":"203.0.113.77","error":"user_not_found","details":{"auth_method":"openid-connect","auth_type":"code","redirect_uri":"https://portal.acme.example/callback","code_id":"6c2e9f14-8a3b-4d70-b5e1-3f9a0d7c2b86","username":"admin"}}"#
    /// A wrong OTP: Keycloak reports `invalid_user_credentials` with `credential_type: otp`.
    static let otpFailure =
        #"{"time":1796297402901,"type":"LOGIN_ERROR","realmId":"acme","clientId":"acme-portal","userId":"0c6b1e9a-3f27-4d58-a2e4-71b9f0d3c865","ipAddress":"2001:db8:4:12::3a","error":"invalid_user_credentials","details":{"auth_method":"openid-connect","auth_type":"code","redirect_uri":"https://portal.acme.example/callback","credential_type":"otp","code_id":"4b9d2e70-1a6c-4f83-8e5b-c0d7a3f9e214","username":"tom.becker"}}"#
    /// A wrong OTP reported as `invalid_totp`.
    static let invalidTOTP =
        #"{"time":1796297402901,"type":"LOGIN_ERROR","realmId":"acme","clientId":"acme-portal","userId":"0c6b1e9a-3f27-4d58-a2e4-71b9f0d3c865","ipAddress":"2001:db8:4:12::3a","error":"invalid_totp","details":{"auth_method":"openid-connect","username":"tom.becker"}}"#
    /// An attempt the brute-force detector refused.
    static let temporarilyDisabled =
        #"{"time":1796271132250,"type":"LOGIN_ERROR","realmId":"acme","clientId":"acme-portal","userId":"a1d4f7b2-9c3e-4e60-8b25-f6e0c9a3d718","ipAddress":"203.0.113.77","error":"user_temporarily_disabled","details":{"auth_method":"openid-connect","auth_type":"code","redirect_uri":"https://portal.acme.example/callback","code_id":"b7e3a1c9-2d5f-4086-9c4a-1e8f6b0d3a72","username":"alice.nguyen"}}"#
    /// An attempt at a disabled account.
    static let userDisabled =
        #"{"time":1796271140000,"type":"LOGIN_ERROR","realmId":"acme","clientId":"acme-portal","userId":"d9c2b6e1-7a40-4f38-a5d3-0e2b8f1c6a94","ipAddress":"203.0.113.77","error":"user_disabled","details":{"auth_method":"openid-connect","auth_type":"code","redirect_uri":"https://portal.acme.example/callback","username":"former.employee"}}"#
    /// A sign-out (only `userId`, no `details.username`).
    static let logout =
        #"{"time":1796292137330,"type":"LOGOUT","realmId":"acme","clientId":"acme-portal","userId":"5b8e2f61-0c4d-4a7e-b1f3-9d6a2c0e8b47","sessionId":"e3a9c1d2-7b64-4f05-8e1a-2c9d3b7f6a50","ipAddress":"198.51.100.23","details":{"redirect_uri":"https://portal.acme.example/"}}"#
    /// A password changed (a required action, or in the account console).
    static let updatePassword =
        #"{"time":1796290890005,"type":"UPDATE_PASSWORD","realmId":"acme","clientId":"account-console","userId":"5b8e2f61-0c4d-4a7e-b1f3-9d6a2c0e8b47","ipAddress":"198.51.100.23","details":{"auth_method":"openid-connect","custom_required_action":"UPDATE_PASSWORD","username":"maria.lopez"}}"#
    /// A password reset, the account named by its email.
    static let resetPassword =
        #"{"time":1796315080560,"type":"RESET_PASSWORD","realmId":"acme","clientId":"acme-portal","userId":"3e8a0f6d-2b71-4c59-9d04-a6f3e1b8c720","ipAddress":"198.51.100.201","details":{"auth_method":"openid-connect","auth_type":"code","redirect_uri":"https://portal.acme.example/callback","username":"kemal.yilmaz@acme.example"}}"#
    /// A registration.
    static let register =
        #"{"time":1796303144210,"type":"REGISTER","realmId":"acme","clientId":"acme-portal","userId":"f2a7c4e9-5d18-4b63-a0e7-9c1b3d6f8a25","ipAddress":"192.0.2.140","details":{"auth_method":"openid-connect","auth_type":"code","register_method":"form","first_name":"Nadia","last_name":"Rahman","email":"nadia.rahman@example.org","redirect_uri":"https://portal.acme.example/callback","username":"nadia.rahman"}}"#
    /// An authorization code exchanged for tokens: not authentication.
    static let codeToToken =
        #"{"time":1796289249702,"type":"CODE_TO_TOKEN","realmId":"acme","clientId":"acme-portal","userId":"5b8e2f61-0c4d-4a7e-b1f3-9d6a2c0e8b47","sessionId":"e3a9c1d2-7b64-4f05-8e1a-2c9d3b7f6a50","ipAddress":"198.51.100.23","details":{"token_id":"c4f8a2e6-1b9d-4073-8e5a-d2c6f0b3a917","grant_type":"authorization_code","refresh_token_type":"Refresh","scope":"openid profile email","code_id":"e3a9c1d2-7b64-4f05-8e1a-2c9d3b7f6a50","client_auth_method":"client-secret"}}"#

    /// Four events as JSON Lines (one per line), oldest first: the form of an event listener
    /// that writes each event as it happens, or of `jq -c '.[]'` over the admin API's array.
    static let jsonLines = [unknownUser, invalidPassword, login, logout].joined(separator: "\n") + "\n"

    // MARK: Hostile elements

    /// Elements that must be skipped (never crash), each with the kind it is skipped as.
    static let hostile: [(name: String, json: String, kind: String)] = [
        ("empty object", "{}", "not an event object"),
        ("an array", #"[{"time":1796289249640,"type":"LOGIN"}]"#, "not an event object"),
        ("a string", #""LOGIN""#, "not an event object"),
        ("type not a string", #"{"time":1796289249640,"type":["LOGIN"],"realmId":"acme"}"#, "not an event object"),
        ("truncated", #"{"time":1796289249640,"type":"LOGIN","realmId":"ac"#, "not JSON"),
        ("trailing garbage", #"{"time":1796289249640,"type":"LOGIN"} {"#, "not JSON"),
        ("duplicate type", #"{"time":1796289249640,"type":"LOGOUT","type":"LOGIN","realmId":"acme"}"#, "not JSON"),
        ("raw tab in a string", "{\"time\":1796289249640,\"type\":\"LOGIN\",\"details\":{\"username\":\"eve\tx\"}}", "not JSON"),
        ("raw newline in a string", "{\"time\":1796289249640,\"type\":\"LOGIN\",\"details\":{\"username\":\"eve\nx\"}}", "not JSON"),
        (
            "nested 40 deep",
            #"{"time":1796289249640,"type":"LOGIN","details":"# + String(repeating: "[", count: 40)
                + String(repeating: "]", count: 40) + "}", "not JSON"
        ),
        ("escaped NUL in username", #"{"time":1796289249640,"type":"LOGIN","realmId":"acme","details":{"username":"eve\u0000"}}"#, "unreadable user"),
        ("escaped newline in username", #"{"time":1796289249640,"type":"LOGIN","realmId":"acme","details":{"username":"eve\nroot"}}"#, "unreadable user"),
        ("C1 control in userId", #"{"time":1796289249640,"type":"LOGOUT","realmId":"acme","userId":"eve\u0085"}"#, "unreadable user"),
        (
            "username of 300 bytes",
            #"{"time":1796289249640,"type":"LOGIN","realmId":"acme","details":{"username":""# + String(repeating: "a", count: 300) + #""}}"#, "unreadable user"
        ),
        ("realm with a space", #"{"time":1796289249640,"type":"LOGIN","realmId":"acme corp","userId":"u1"}"#, "unreadable realm"),
        ("realm with a slash", #"{"time":1796289249640,"type":"LOGIN","realmId":"../acme","userId":"u1"}"#, "unreadable realm"),
        ("empty realm", #"{"time":1796289249640,"type":"LOGIN","realmId":"","userId":"u1"}"#, "unreadable realm"),
        ("realm a number", #"{"time":1796289249640,"type":"LOGIN","realmId":7,"userId":"u1"}"#, "unreadable realm"),
        ("no time", #"{"type":"LOGIN","realmId":"acme","userId":"u1"}"#, "unreadable time"),
        ("time a string", #"{"time":"1796289249640","type":"LOGIN","realmId":"acme","userId":"u1"}"#, "unreadable time"),
        ("time null", #"{"time":null,"type":"LOGIN","realmId":"acme","userId":"u1"}"#, "unreadable time"),
        ("time a fraction", #"{"time":1796289249640.5,"type":"LOGIN","realmId":"acme","userId":"u1"}"#, "unreadable time"),
        ("time an exponent", #"{"time":1.79628924964e12,"type":"LOGIN","realmId":"acme","userId":"u1"}"#, "unreadable time"),
        ("time negative", #"{"time":-1,"type":"LOGIN","realmId":"acme","userId":"u1"}"#, "unreadable time"),
        ("time past year 9999", #"{"time":253402300800000,"type":"LOGIN","realmId":"acme","userId":"u1"}"#, "unreadable time"),
        ("time 2^63", #"{"time":9223372036854775808,"type":"LOGIN","realmId":"acme","userId":"u1"}"#, "unreadable time"),
        ("time 2^64-1", #"{"time":18446744073709551615,"type":"LOGIN","realmId":"acme","userId":"u1"}"#, "unreadable time"),
        ("time of 400 digits", #"{"time":"# + String(repeating: "9", count: 400) + #","type":"LOGIN","realmId":"acme","userId":"u1"}"#, "unreadable time"),
        ("unknown type", #"{"time":1796289249640,"type":"login","realmId":"acme","userId":"u1"}"#, "not authentication")
    ]
}
