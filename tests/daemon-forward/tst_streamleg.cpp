// Unit tests of which openings are a forwarder's leg handles and which
// stream each lets through (daemon-forward/streamleg.h); values only.

#include "daemon-forward/streamleg.h"

#include <QTest>

using namespace cloop;
using namespace cloop::forward;
using protocol::ChannelOpen;
using protocol::DirectLeg;
using protocol::SegmentOpen;
using protocol::UsbOpen;

namespace {
DirectLeg leg(const QString &url = {})
{
    return DirectLeg { url, QString(43, u'k') };
}

template <typename Open>
Open runOpening(qint64 runId, qint64 bindingId, std::optional<DirectLeg> withLeg)
{
    Open open;
    open.runId = runId;
    open.bindingId = bindingId;
    open.leg = std::move(withLeg);
    return open;
}

SegmentOpen segment(qint64 runId, qint64 bindingId, std::optional<DirectLeg> withLeg = {})
{
    return runOpening<SegmentOpen>(runId, bindingId, std::move(withLeg));
}

UsbOpen usb(qint64 runId, qint64 bindingId, std::optional<DirectLeg> withLeg = {})
{
    return runOpening<UsbOpen>(runId, bindingId, std::move(withLeg));
}
} // namespace

Q_DECLARE_METATYPE(cloop::protocol::ChannelOpen)

class TestStreamLeg final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void handles();
    void streams_data();
    void streams();
};

void TestStreamLeg::handles()
{
    // A run's segment or USB opening with a leg is a handle, with or
    // without a URL; any other opening is not.
    QCOMPARE(legOf(segment(5, 7, leg())), leg());
    QCOMPARE(
        legOf(usb(5, 7, leg(QStringLiteral("wss://a:7443")))), leg(QStringLiteral("wss://a:7443")));
    QVERIFY(!legOf(segment(5, 7)));
    QVERIFY(!legOf(usb(5, 7)));
    UsbOpen test;
    test.purpose = UsbOpen::Purpose::Test;
    QVERIFY(!legOf(test));
    QVERIFY(!legOf(protocol::DeviceTestOpen {}));
    QVERIFY(!legOf(protocol::RunLogOpen { 5 }));
    // An opening that does not parse is no handle's stream.
    QVERIFY(!isStreamOf(segment(5, 7, leg()), QJsonObject { { QStringLiteral("kind"), 1 } }));
}

void TestStreamLeg::streams_data()
{
    QTest::addColumn<ChannelOpen>("handle");
    QTest::addColumn<ChannelOpen>("stream");
    QTest::addColumn<bool>("itsStream");

    QTest::newRow("segment") << ChannelOpen(segment(5, 7, leg())) << ChannelOpen(segment(5, 7))
                             << true;
    QTest::newRow("usb") << ChannelOpen(usb(5, 7, leg())) << ChannelOpen(usb(5, 7)) << true;
    QTest::newRow("another run") << ChannelOpen(segment(5, 7, leg())) << ChannelOpen(segment(6, 7))
                                 << false;
    QTest::newRow("another binding")
        << ChannelOpen(usb(5, 7, leg())) << ChannelOpen(usb(5, 8)) << false;
    QTest::newRow("another kind") << ChannelOpen(segment(5, 7, leg())) << ChannelOpen(usb(5, 7))
                                  << false;
    QTest::newRow("a leg of its own")
        << ChannelOpen(segment(5, 7, leg())) << ChannelOpen(segment(5, 7, leg())) << false;
    UsbOpen test;
    test.purpose = UsbOpen::Purpose::Test;
    QTest::newRow("a usb test") << ChannelOpen(usb(5, 7, leg())) << ChannelOpen(test) << false;
    QTest::newRow("a device test")
        << ChannelOpen(segment(5, 7, leg())) << ChannelOpen(protocol::DeviceTestOpen {}) << false;
}

void TestStreamLeg::streams()
{
    QFETCH(ChannelOpen, handle);
    QFETCH(ChannelOpen, stream);
    QFETCH(bool, itsStream);
    QCOMPARE(isStreamOf(handle, protocol::serializeChannelOpen(stream)), itsStream);
}

QTEST_GUILESS_MAIN(TestStreamLeg)
#include "tst_streamleg.moc"
