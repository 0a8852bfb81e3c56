/// Identifiers and display texts of generated workloads: stable, readable, never secrets.
enum WorkloadNames {
    static func user(_ index: Int) -> String { "user-" + padded(index, 6) }
    static func device(_ index: Int) -> String { "device-" + padded(index, 5) }
    static func kiosk(_ index: Int) -> String { "kiosk-" + padded(index, 4) }
    static func staff(kiosk: Int, member: Int) -> String { "staff-" + padded(kiosk, 4) + "-" + padded(member, 2) }
    static func leaked(_ index: Int) -> String { "leaked-" + padded(index, 7) }
    static func stuffer(_ index: Int) -> String { "stuffer-" + padded(index, 3) }
    static func sprayer(_ index: Int) -> String { "sprayer-" + padded(index, 2) }
    static func newcomer(_ index: Int) -> String { "newcomer-" + padded(index, 6) }
    static func signUpDevice(_ index: Int) -> String { "signup-" + padded(index, 6) }
    static let bruteForceDevice = "brute-1"

    static let firstNames = [
        "Amara", "Bjørn", "Chloé", "Dmitri", "Elif", "François", "Grace", "Hiroshi",
        "Inès", "José", "Kwame", "Léa", "Mateo", "Nadia", "Oluwaseun", "Priya"
    ]
    static let lastNames = [
        "Andersson", "Baptiste", "Chen", "Dubois", "Eriksen", "Fernández", "García", "Hoffmann",
        "Ibrahim", "Jansen", "Kowalski", "Lefèvre", "Müller", "Nakamura", "Okafor", "Pérez"
    ]
    static let roles = ["Nurse", "Charge nurse", "Pharmacist", "Physician", "Midwife", "Porter", "Ward clerk", "Therapist"]

    static func displayName(kiosk: Int, member: Int) -> String {
        firstNames[(kiosk &* 7 &+ member) % firstNames.count] + " " + lastNames[(kiosk &* 3 &+ member &* 5) % lastNames.count]
    }

    static func subtitle(kiosk: Int, member: Int) -> String {
        roles[(kiosk &+ member &* 3) % roles.count] + ", ward " + String(kiosk % 40 + 1)
    }

    static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
