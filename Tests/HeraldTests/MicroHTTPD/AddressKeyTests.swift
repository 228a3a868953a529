import CMicroHTTPD
import Foundation
@testable import HeraldMicroHTTPD
import Testing

/// Whom a connection counts against for the per-address limit.
@Suite("Per-address keys")
struct AddressKeyTests {
    private func key(_ text: String) -> AddressKey {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, text, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            return withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { AddressKey(herald_address_key_of($0)) } }
        }
        var v6 = sockaddr_in6()
        _ = inet_pton(AF_INET6, text, &v6.sin6_addr)
        v6.sin6_family = sa_family_t(AF_INET6)
        return withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { AddressKey(herald_address_key_of($0)) } }
    }

    @Test("An IPv6 /64 is one client; an IPv4 address is the same client whether it arrives mapped or not")
    func grouping() {
        #expect(key("2001:db8:1:2::1") == key("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        #expect(key("2001:db8:1:2::1") != key("2001:db8:1:3::1"))
        #expect(key("2001:db8:1:2::1").description == "2001:db8:1:2::/64")
        #expect(key("192.0.2.7") == key("::ffff:192.0.2.7"))
        #expect(key("192.0.2.7") != key("192.0.2.8"))
        #expect(key("192.0.2.7").description == "192.0.2.7")
        #expect(key("::c000:207") != key("192.0.2.7"), "an IPv6 address is never taken for an IPv4 one")
    }
}
