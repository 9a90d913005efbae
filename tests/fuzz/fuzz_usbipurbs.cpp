// libFuzzer target: the URB counter a run's USB/IP bytes pass through on
// the forwarder (common/device/usb/usbipurbcounter.h).
//
// Input: one byte giving a piece size, a big-endian u32 length of the bytes
// towards the device, those bytes, then the bytes towards the run.
//
// Invariants: no crash and no read outside the input; the counts do not
// depend on how the bytes are cut into pieces; once the counter lost track
// it counts nothing more.

#include <cstddef>
#include <cstdint>

#include <QtEndian>

#include "common/device/usb/usbipurbcounter.h"
#include "fuzzcheck.h"

using cloop::device::usb::usbip::UrbCounter;
using cloop::fuzz::check;

namespace {

void feedInPieces(
    UrbCounter &counter, QByteArrayView toDevice, QByteArrayView toRun, qsizetype piece)
{
    for (qsizetype at = 0; at < std::max(toDevice.size(), toRun.size()); at += piece) {
        if (at < toDevice.size())
            counter.fromRun(toDevice.sliced(at, std::min(piece, toDevice.size() - at)));
        if (at < toRun.size())
            counter.fromDevice(toRun.sliced(at, std::min(piece, toRun.size() - at)));
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    const QByteArrayView input(reinterpret_cast<const char *>(data), qsizetype(size));
    const qsizetype piece = qsizetype(quint8(input[0])) + 1;
    const qsizetype towardsDevice
        = std::min<qsizetype>(qFromBigEndian<quint32>(input.data() + 1), input.size() - 5);
    const QByteArrayView toDevice = input.sliced(5, towardsDevice);
    const QByteArrayView toRun = input.sliced(5 + towardsDevice);

    // Each way on its own, whole: the reference the pieces must agree with
    // as long as neither way lost track (a way's verdict can depend on what
    // the other way said first, which the pieces interleave differently).
    UrbCounter whole;
    whole.fromRun(toDevice);
    whole.fromDevice(toRun);
    UrbCounter pieces;
    feedInPieces(pieces, toDevice, toRun, piece);
    if (!whole.hasLostTrack() && !pieces.hasLostTrack()) {
        check(whole.submitted() == pieces.submitted(), "submissions do not depend on the pieces");
        check(whole.answered() == pieces.answered(), "answers do not depend on the pieces");
    }
    check(pieces.answered() <= pieces.submitted(), "no more answers than submissions");

    if (pieces.hasLostTrack()) {
        const quint64 submitted = pieces.submitted();
        const quint64 answered = pieces.answered();
        pieces.fromRun(toDevice);
        pieces.fromDevice(toRun);
        check(pieces.submitted() == submitted && pieces.answered() == answered,
            "nothing is counted after the counter lost track");
    }
    return 0;
}
