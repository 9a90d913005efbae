// UrbCounter: the URBs of a USB/IP data phase counted as its bytes pass, in
// pieces of any size, each way; a stream that leaves the framing stops the
// counting.

#include "common/device/usb/usbipprotocol.h"
#include "common/device/usb/usbipurbcounter.h"

#include <QTest>

using namespace cloop::device::usb::usbip;

namespace {

QByteArray submit(quint32 sequence, quint32 direction, qint32 length, qint32 packets = -1)
{
    UrbHeader header;
    header.command = UrbCommand::CmdSubmit;
    header.sequence = sequence;
    header.direction = direction;
    header.endpoint = 1;
    header.length = length;
    header.packetCount = packets;
    QByteArray bytes = encodeUrbHeader(header);
    if (direction == kDirectionOut)
        bytes += QByteArray(length, 'o');
    if (packets > 0)
        bytes += QByteArray(packets * 16, 'd');
    return bytes;
}

QByteArray answer(quint32 sequence, qint32 actual, bool withData, qint32 packets = -1)
{
    UrbHeader header;
    header.command = UrbCommand::RetSubmit;
    header.sequence = sequence;
    header.length = actual;
    header.packetCount = packets;
    QByteArray bytes = encodeUrbHeader(header);
    if (withData)
        bytes += QByteArray(actual, 'i');
    if (packets > 0)
        bytes += QByteArray(packets * 16, 'd');
    return bytes;
}

QByteArray unlink(UrbCommand command, quint32 sequence)
{
    UrbHeader header;
    header.command = command;
    header.sequence = sequence;
    header.flags = sequence - 1;
    return encodeUrbHeader(header);
}

} // namespace

class TestUsbipUrbCounter final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void countsEachWayWhateverThePieces_data();
    void countsEachWayWhateverThePieces();
    void unlinksAreNoUrbs();
    void aStreamOutOfFramingStopsTheCount_data();
    void aStreamOutOfFramingStopsTheCount();
    void unansweredSubmissionsAreBounded();
};

void TestUsbipUrbCounter::countsEachWayWhateverThePieces_data()
{
    QTest::addColumn<int>("piece");
    QTest::newRow("whole") << 0;
    QTest::newRow("byte by byte") << 1;
    QTest::newRow("7 bytes") << 7;
    QTest::newRow("48 bytes") << 48;
    QTest::newRow("4 KiB") << 4096;
}

void TestUsbipUrbCounter::countsEachWayWhateverThePieces()
{
    QFETCH(int, piece);
    // A control IN, a bulk OUT of 4 KiB, an isochronous IN of 3 packets.
    const QByteArray toDevice = submit(1, kDirectionIn, 18) + submit(2, kDirectionOut, 4096)
        + submit(3, kDirectionIn, 3072, 3);
    const QByteArray toRun
        = answer(1, 18, true) + answer(2, 4096, false) + answer(3, 3000, true, 3);
    UrbCounter counter;
    const bool whole = QByteArray(QTest::currentDataTag()) == "whole";
    // Each way in pieces; the answers after what they answer, as a device's are.
    for (const auto &[bytes, fromRun] :
        { std::pair { toDevice, true }, std::pair { toRun, false } }) {
        const qsizetype step = whole ? bytes.size() : piece;
        for (qsizetype at = 0; at < bytes.size(); at += step) {
            const QByteArrayView part
                = QByteArrayView(bytes).sliced(at, std::min(step, bytes.size() - at));
            if (fromRun)
                counter.fromRun(part);
            else
                counter.fromDevice(part);
        }
    }
    QVERIFY(!counter.hasLostTrack());
    QCOMPARE(counter.submitted(), 3u);
    QCOMPARE(counter.answered(), 3u);
}

void TestUsbipUrbCounter::unlinksAreNoUrbs()
{
    UrbCounter counter;
    counter.fromRun(submit(5, kDirectionIn, 512) + unlink(UrbCommand::CmdUnlink, 6));
    counter.fromDevice(unlink(UrbCommand::RetUnlink, 6) + answer(5, 0, true));
    counter.fromRun(submit(7, kDirectionOut, 8));
    QVERIFY(!counter.hasLostTrack());
    QCOMPARE(counter.submitted(), 2u);
    QCOMPARE(counter.answered(), 1u);
}

void TestUsbipUrbCounter::aStreamOutOfFramingStopsTheCount_data()
{
    QTest::addColumn<QByteArray>("toDevice");
    QTest::addColumn<QByteArray>("toRun");
    QTest::newRow("an answer sent towards the device")
        << (submit(1, kDirectionIn, 8) + answer(1, 8, true)) << QByteArray();
    QTest::newRow("a submission from the device") << QByteArray() << submit(1, kDirectionIn, 8);
    QTest::newRow("an answer to nothing submitted") << QByteArray() << answer(9, 8, true);
    QTest::newRow("an unknown command")
        << (submit(1, kDirectionOut, 4) + QByteArray(48, '\x7f')) << QByteArray();
    QTest::newRow("a negative length") << submit(1, kDirectionIn, -5) << QByteArray();
}

void TestUsbipUrbCounter::aStreamOutOfFramingStopsTheCount()
{
    QFETCH(QByteArray, toDevice);
    QFETCH(QByteArray, toRun);
    UrbCounter counter;
    counter.fromRun(toDevice);
    counter.fromDevice(toRun);
    QVERIFY(counter.hasLostTrack());
    const quint64 submitted = counter.submitted();
    // Nothing after it is counted.
    counter.fromRun(submit(100, kDirectionIn, 8));
    QCOMPARE(counter.submitted(), submitted);
}

void TestUsbipUrbCounter::unansweredSubmissionsAreBounded()
{
    UrbCounter counter;
    QByteArray flood;
    for (quint32 sequence = 1; sequence <= UrbCounter::kPendingKept; ++sequence)
        flood += submit(sequence, kDirectionIn, 8);
    counter.fromRun(flood);
    QVERIFY(!counter.hasLostTrack());
    counter.fromRun(submit(UrbCounter::kPendingKept + 1, kDirectionIn, 8));
    QVERIFY(counter.hasLostTrack());
    QCOMPARE(counter.submitted(), quint64(UrbCounter::kPendingKept));
}

QTEST_GUILESS_MAIN(TestUsbipUrbCounter)
#include "tst_usbipurbcounter.moc"
