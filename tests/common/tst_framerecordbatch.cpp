// FrameRecordBatch against a real channel: whole records or none.

#include "common/protocol/framerecord.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/framerecordbatch.h"

#include <QtTest>

using namespace cloop;
using device::l2::VnetHeader;
using tunnel::ChannelMultiplexer;
using tunnel::FrameRecordBatch;

class TestFrameRecordBatch : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void recordsGoOutWholeAndInOrder();
    void aRefusedBatchIsDroppedWholeAndCounted();
    void aBatchFillsOneDataFrameAndCrossesAsOne();
};

void TestFrameRecordBatch::recordsGoOutWholeAndInOrder()
{
    ChannelMultiplexer mux(ChannelMultiplexer::Side::Hub);
    QByteArray sent;
    connect(&mux, &ChannelMultiplexer::frameReady, this,
        [&sent](const QByteArray &frame) { sent += frame; });
    auto channel
        = mux.openChannel(QJsonObject { { QStringLiteral("kind"), QStringLiteral("segment") } });
    QVERIFY(channel);

    FrameRecordBatch batch;
    QVERIFY(batch.isEmpty());
    QByteArray expected;
    VnetHeader header;
    header.flags = VnetHeader::kDataValid;
    for (int i = 0; i < 10; ++i) {
        const QByteArray frame = QByteArray(14, char(i)) + QByteArray(100 + i, 'p');
        batch.append(header, frame);
        protocol::appendFrameRecord(expected, header, frame);
    }
    QVERIFY(batch.hasRoomFor(1514));
    QVERIFY(batch.flush(**channel));
    QCOMPARE(batch.sentFrames(), 10u);
    QCOMPARE(batch.sentBytes(), quint64(10 * 114 + 45));
    QCOMPARE(batch.droppedFrames(), 0u);
    QVERIFY(batch.isEmpty());
    // What waits for the peer's credit is exactly the records, in order.
    QCOMPARE((*channel)->queuedBytes(), expected.size());
    // An empty batch writes nothing and says so.
    QVERIFY(batch.flush(**channel));
    QCOMPARE(batch.sentFrames(), 10u);
    QCOMPARE((*channel)->queuedBytes(), expected.size());
}

void TestFrameRecordBatch::aRefusedBatchIsDroppedWholeAndCounted()
{
    ChannelMultiplexer mux(ChannelMultiplexer::Side::Hub);
    auto channel
        = mux.openChannel(QJsonObject { { QStringLiteral("kind"), QStringLiteral("segment") } });
    QVERIFY(channel);
    FrameRecordBatch batch;
    const QByteArray frame = QByteArray(14, 'h') + QByteArray(9000, 'j');
    // Nobody grants credit: the channel's queue fills to its cap.
    for (int round = 0; round < 40; ++round) {
        while (batch.hasRoomFor(frame.size()))
            batch.append(VnetHeader {}, frame);
        batch.flush(**channel);
        QVERIFY(batch.isEmpty());
    }
    const quint64 taken = batch.sentFrames();
    QVERIFY(taken > 0);
    QVERIFY(batch.droppedFrames() > 0);
    // Only whole batches of whole records were queued.
    const qsizetype recordBytes
        = protocol::kFrameRecordLengthBytes + VnetHeader::kSize + frame.size();
    QCOMPARE((*channel)->queuedBytes() % recordBytes, 0);
    QCOMPARE(quint64((*channel)->queuedBytes() / recordBytes), taken);
    QVERIFY((*channel)->queuedBytes() <= mux.limits().maxQueuedPerChannel);
}

void TestFrameRecordBatch::aBatchFillsOneDataFrameAndCrossesAsOne()
{
    ChannelMultiplexer hub(ChannelMultiplexer::Side::Hub);
    ChannelMultiplexer daemon(ChannelMultiplexer::Side::Daemon);
    QList<protocol::ChannelFrame> dataFrames;
    connect(&hub, &ChannelMultiplexer::frameReady, this, [&](const QByteArray &bytes) {
        auto frame = protocol::decodeFrame(bytes);
        QVERIFY(frame);
        if (frame->kind == protocol::FrameKind::Data)
            dataFrames.append(*frame);
        QVERIFY(daemon.handleFrame(bytes));
    });
    connect(&daemon, &ChannelMultiplexer::frameReady, this,
        [&](const QByteArray &bytes) { QVERIFY(hub.handleFrame(bytes)); });
    connect(&daemon, &ChannelMultiplexer::channelRequested, this,
        [](tunnel::Channel *c) { c->accept(); });
    auto channel
        = hub.openChannel(QJsonObject { { QStringLiteral("kind"), QStringLiteral("segment") } });
    QVERIFY(channel);
    QCOMPARE((*channel)->state(), tunnel::Channel::State::Open);

    const QByteArray frame = QByteArray(14, 'h') + QByteArray(1500, 'j');
    const qsizetype recordBytes
        = protocol::kFrameRecordLengthBytes + VnetHeader::kSize + frame.size();
    FrameRecordBatch batch;
    int frames = 0;
    while (batch.hasRoomFor(frame.size())) {
        batch.append(VnetHeader {}, frame);
        ++frames;
    }
    // As many records as one DATA payload holds, and not one more.
    QCOMPARE(frames, int(protocol::kMaxDataPayload / recordBytes));
    QVERIFY(batch.flush(**channel));
    QCOMPARE(dataFrames.size(), 1);
    QCOMPARE(dataFrames.first().payload.size(), frames * recordBytes);

    // An empty batch takes even the largest frame, which then goes alone.
    const QByteArray largest(device::l2::kMaxFrameBytes, 'g');
    QVERIFY(batch.hasRoomFor(largest.size()));
    batch.append(VnetHeader {}, largest);
    QVERIFY(!batch.hasRoomFor(60));
    QVERIFY(batch.flush(**channel));
    QCOMPARE(batch.sentFrames(), quint64(frames + 1));
}

QTEST_GUILESS_MAIN(TestFrameRecordBatch)
#include "tst_framerecordbatch.moc"
