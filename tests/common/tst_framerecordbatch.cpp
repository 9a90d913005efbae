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
    const FrameRecordBatch::Flushed flushed = batch.flush(**channel);
    QVERIFY(flushed.taken);
    QCOMPARE(flushed.frames, 10u);
    QCOMPARE(flushed.bytes, quint64(10 * 114 + 45));
    QVERIFY(batch.isEmpty());
    // What waits for the peer's credit is exactly the records, in order.
    QCOMPARE((*channel)->queuedBytes(), expected.size());
    // An empty batch writes nothing and says so.
    const FrameRecordBatch::Flushed none = batch.flush(**channel);
    QVERIFY(none.taken);
    QCOMPARE(none.frames, 0u);
    QCOMPARE((*channel)->queuedBytes(), expected.size());
}

void TestFrameRecordBatch::aRefusedBatchIsDroppedWholeAndCounted()
{
    ChannelMultiplexer mux(ChannelMultiplexer::Side::Hub);
    auto channel = mux.openChannel(QJsonObject{{QStringLiteral("kind"), QStringLiteral("segment")}});
    QVERIFY(channel);
    FrameRecordBatch batch;
    const QByteArray frame = QByteArray(14, 'h') + QByteArray(9000, 'j');
    quint64 taken = 0;
    quint64 dropped = 0;
    // Nobody grants credit: the channel's queue fills to its cap.
    for (int round = 0; round < 40; ++round) {
        while (!batch.isFull())
            batch.append(VnetHeader{}, frame);
        const FrameRecordBatch::Flushed flushed = batch.flush(**channel);
        (flushed.taken ? taken : dropped) += flushed.frames;
        QVERIFY(batch.isEmpty());
    }
    QVERIFY(taken > 0);
    QVERIFY(dropped > 0);
    // Only whole batches of whole records were queued.
    const qsizetype recordBytes = protocol::kFrameRecordLengthBytes + VnetHeader::kSize + frame.size();
    QCOMPARE((*channel)->queuedBytes() % recordBytes, 0);
    QCOMPARE(quint64((*channel)->queuedBytes() / recordBytes), taken);
    QVERIFY((*channel)->queuedBytes() <= mux.limits().maxQueuedPerChannel);
}

QTEST_GUILESS_MAIN(TestFrameRecordBatch)
#include "tst_framerecordbatch.moc"
