// ChunkQueue: bytes in order, relayed arrays shared rather than copied.

#include "common/tunnel/chunkqueue.h"

#include <QRandomGenerator>
#include <QtTest>

using cloop::tunnel::ChunkQueue;

class TestChunkQueue : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aWholeChunkLeavesUncopied();
    void aLargeChunkIsSplitAtTheLimit();
    void smallChunksAreJoinedUpToTheLimit();
    void emptyAndZeroTakeNothing();
    void randomAppendsAndTakesKeepEveryByteInOrder();
};

void TestChunkQueue::aWholeChunkLeavesUncopied()
{
    ChunkQueue queue;
    const QByteArray payload(64 * 1024, 'p');
    queue.append(payload);
    QCOMPARE(queue.size(), payload.size());
    const QByteArray out = queue.take(64 * 1024);
    QCOMPARE(out, payload);
    // The same allocation: nothing was copied on the way through.
    QCOMPARE(out.constData(), payload.constData());
    QVERIFY(queue.isEmpty());
}

void TestChunkQueue::aLargeChunkIsSplitAtTheLimit()
{
    ChunkQueue queue;
    queue.append(QByteArray("abcdefghij"));
    QCOMPARE(queue.take(4), QByteArray("abcd"));
    QCOMPARE(queue.size(), 6);
    QCOMPARE(queue.take(4), QByteArray("efgh"));
    QCOMPARE(queue.take(4), QByteArray("ij"));
    QVERIFY(queue.isEmpty());
}

void TestChunkQueue::smallChunksAreJoinedUpToTheLimit()
{
    ChunkQueue queue;
    queue.append(QByteArray("ab"));
    queue.append(QByteArray("cd"));
    queue.append(QByteArray("efghij"));
    // "ab" + "cd" fit in 5; "efghij" would not, so it waits whole for the
    // next take rather than being cut.
    QCOMPARE(queue.take(5), QByteArray("abcd"));
    QCOMPARE(queue.take(100), QByteArray("efghij"));
    queue.append(QByteArray("x"));
    queue.append(QByteArray("y"));
    // Taking everything there is returns everything.
    QCOMPARE(queue.take(queue.size()), QByteArray("xy"));
}

void TestChunkQueue::emptyAndZeroTakeNothing()
{
    ChunkQueue queue;
    QVERIFY(queue.take(10).isEmpty());
    queue.append(QByteArray());
    QVERIFY(queue.isEmpty());
    queue.append(QByteArray("z"));
    QVERIFY(queue.take(0).isEmpty());
    QVERIFY(queue.take(-1).isEmpty());
    QCOMPARE(queue.size(), 1);
    queue.clear();
    QVERIFY(queue.isEmpty());
    QVERIFY(queue.take(1).isEmpty());
}

void TestChunkQueue::randomAppendsAndTakesKeepEveryByteInOrder()
{
    QRandomGenerator rng(20261129);
    ChunkQueue queue;
    QByteArray in;
    QByteArray out;
    for (int round = 0; round < 2000; ++round) {
        if (rng.bounded(2) == 0) {
            QByteArray chunk(rng.bounded(0, 3000), Qt::Uninitialized);
            for (char &c : chunk)
                c = char(rng.bounded(256));
            in += chunk;
            queue.append(chunk);
        } else {
            const qsizetype before = queue.size();
            const qsizetype limit = rng.bounded(0, 5000);
            const QByteArray taken = queue.take(limit);
            QVERIFY(taken.size() <= std::min(before, limit));
            // Never nothing while something waits and something may be taken.
            QCOMPARE(taken.isEmpty(), before == 0 || limit == 0);
            out += taken;
        }
        QCOMPARE(queue.size(), in.size() - out.size());
    }
    out += queue.take(queue.size());
    QVERIFY(queue.isEmpty());
    QVERIFY(out == in);
}

QTEST_GUILESS_MAIN(TestChunkQueue)
#include "tst_chunkqueue.moc"
