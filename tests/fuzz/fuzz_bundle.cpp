// libFuzzer target: enrollment bundle decoding.
//
// Each input is tried twice for each bundle kind:
//  1. as the pasted text itself, which exercises the prefix, character and
//     base64 checks (random bytes almost never carry a valid checksum);
//  2. as the JSON body of a bundle, wrapped here with the right prefix and
//     checksum, so the fuzzer also reaches the URL, token and pin checks.
//
// Invariant: a bundle that decodes re-encodes to text that decodes to the
// same kind, hub URLs, token and pins.

#include <cstddef>
#include <cstdint>

#include "common/crypto/secrets.h"
#include "common/identity/enrollmentbundle.h"
#include "fuzzcheck.h"

using cloop::fuzz::check;
using cloop::identity::EnrollmentBundle;

namespace {

constexpr qsizetype kChecksumSize = 4; // as documented in enrollmentbundle.h

QString wrapAsBundle(QByteArrayView json, EnrollmentBundle::Kind kind)
{
    const QString prefix = EnrollmentBundle::prefixFor(kind);
    const QByteArray sum
        = cloop::secrets::sha256(prefix.toLatin1() + json.toByteArray()).left(kChecksumSize);
    const QByteArray raw = json.toByteArray() + sum;
    return prefix
        + QString::fromLatin1(
            raw.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

void roundTrip(const QString &text, EnrollmentBundle::Kind kind)
{
    const auto first = EnrollmentBundle::decode(text, kind);
    if (!first)
        return;
    check(first->kind == kind, "a decoded bundle has the kind asked for");

    const QString encoded = first->encode();
    const auto second = EnrollmentBundle::decode(encoded, kind);
    check(second.ok(), "a re-encoded bundle decodes again");
    check(second->kind == first->kind, "round trip keeps the kind");
    check(second->hub == first->hub, "round trip keeps the hub URL");
    check(second->hubs() == first->hubs(), "round trip keeps every hub URL, in order");
    check(second->token == first->token, "round trip keeps the token");
    check(second->pins == first->pins, "round trip keeps the pins");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView input(data, static_cast<qsizetype>(size));
    const QString text = QString::fromUtf8(input);
    for (const auto kind :
        { EnrollmentBundle::Kind::Forwarder, EnrollmentBundle::Kind::Executor }) {
        roundTrip(text, kind);
        roundTrip(wrapAsBundle(input, kind), kind);
    }
    return 0;
}
