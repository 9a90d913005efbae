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
};

void TestFrameRecordBatch::recordsGoOutWholeAndInOrder()
{
    ChannelMultiplexer mux(ChannelMultiplexer::Side::Hub);
    QByteArray sent;
    connect(&mux, &ChannelMultiplexer::frameReady, this, [&sent](const QByteArray &frame) { sent += frame; });
    auto channel = mux.openChannel(QJsonObject{{QStringLiteral("kind"), QStringLiteral("segment")}});
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
    QVERIFY(!batch.isFull());
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
    auto channel = mux.openChannel(QJsonObject{{QStringLiteral("kind"), QStringLiteral("segment")}});
    QVERIFY(channel);
    FrameRecordBatch batch;
    const QByteArray frame = QByteArray(14, 'h') + QByteArray(9000, 'j');
    // Nobody grants credit: the channel's queue fills to its cap.
    for (int round = 0; round < 40; ++round) {
        while (!batch.isFull())
            batch.append(VnetHeader{}, frame);
        batch.flush(**channel);
        QVERIFY(batch.isEmpty());
    }
    const quint64 taken = batch.sentFrames();
    QVERIFY(taken > 0);
    QVERIFY(batch.droppedFrames() > 0);
    // Only whole batches of whole records were queued.
    const qsizetype recordBytes = protocol::kFrameRecordLengthBytes + VnetHeader::kSize + frame.size();
    QCOMPARE((*channel)->queuedBytes() % recordBytes, 0);
    QCOMPARE(quint64((*channel)->queuedBytes() / recordBytes), taken);
    QVERIFY((*channel)->queuedBytes() <= mux.limits().maxQueuedPerChannel);
}

QTEST_GUILESS_MAIN(TestFrameRecordBatch)
#include "tst_framerecordbatch.moc"
