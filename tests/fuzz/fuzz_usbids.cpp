// libFuzzer target: the USB ID database reader, on any bytes.
//
// Invariants: no crash; every name it keeps belongs to a vendor it kept;
// reading the same bytes twice gives the same database; and a well-formed
// vendor and product put in front of the input are read, whatever follows.

#include <cstddef>
#include <cstdint>

#include "common/device/usb/usbiddatabase.h"
#include "fuzzcheck.h"

using cloop::device::usb::UsbIdDatabase;
using cloop::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView text(reinterpret_cast<const char *>(data), qsizetype(size));
    const UsbIdDatabase db = UsbIdDatabase::parse(text);
    check(db.productCount() == 0 || db.vendorCount() > 0, "products only under vendors");
    const UsbIdDatabase again = UsbIdDatabase::parse(text);
    check(again.vendorCount() == db.vendorCount() && again.productCount() == db.productCount(),
        "deterministic");

    // Entries in front are read whatever follows, unless the rest names
    // the same ids again. The "x" line ends the vendor, so the input's
    // own leading product lines do not land under it.
    if (!text.toByteArray().toLower().contains("feed")) {
        QByteArray extended("feed  Fuzz Vendor\n\tbeef  Fuzz Product\nx\n");
        extended += text.toByteArray();
        const UsbIdDatabase more = UsbIdDatabase::parse(extended);
        check(
            more.vendorName(0xfeed) == QLatin1String("Fuzz Vendor"), "a vendor in front is named");
        check(more.productName(0xfeed, 0xbeef) == QLatin1String("Fuzz Product"),
            "a product in front is named");
    }
    return 0;
}
