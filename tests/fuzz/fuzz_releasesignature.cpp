// libFuzzer target: release signature files (PACKAGE.deb.sig), which a
// device reads from its hub before it installs anything.
//
// Invariants: a file that is read has exactly one form (written back, it is
// the input), its statement passes its own check, and no key that is not
// the one it names verifies it.

#include <cstddef>
#include <cstdint>

#include "common/release/releasesignature.h"
#include "fuzzcheck.h"

using cloop::fuzz::check;
using cloop::release::ReleaseKey;
using cloop::release::ReleaseSignature;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray input(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const auto read = ReleaseSignature::fromFile(input);
    if (!read) {
        check(!read.error().message.isEmpty(), "a refusal says why");
        return 0;
    }
    check(read->toFile() == input, "a signature file has one form");
    check(read->statement.check().ok(), "a read statement passes its check");
    check(read->signature.size() == 64, "an Ed25519 signature is 64 bytes");
    static const auto key = ReleaseKey::generate();
    check(key.ok() && !key->verify(*read).ok(), "a key that did not sign never verifies");
    return 0;
}
