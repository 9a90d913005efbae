// Unit: the hub takes a run's output off its log channel and stores it,
// and output it cannot store waits instead of being dropped. A real file
// store behind a switch that refuses appends the way a full data folder
// does; the channel is a real multiplexer pair.

#include "common/protocol/channelopen.h"
#include "common/protocol/logrecord.h"
#include "hub/server/runlogreceiver.h"
#include "hub/storage/database.h"
#include "hub/storage/filerunlogstore.h"
#include "support/multiplexerpair.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace cloop;
using namespace cloop::hub;
using protocol::LogRecord;
using protocol::LogRecordKind;

namespace {

constexpr qint64 kRun = 7;

// The file store, except while `full`: then appends fail as the disk's do.
class SwitchableStore final : public RunLogStore
{
public:
    explicit SwitchableStore(std::unique_ptr<FileRunLogStore> files)
        : m_files(std::move(files))
    { }

    bool full = false;
    int refusedAppends = 0;

    Status append(qint64 runId, const QList<LogRecord> &records) override
    {
        if (full) {
            ++refusedAppends;
            return Error::make(QString(kStorageFull), QStringLiteral("no space left on device"));
        }
        return m_files->append(runId, records);
    }
    Result<StoredLogPage> read(qint64 runId, quint64 from, qsizetype maxBytes) const override
    {
        return m_files->read(runId, from, maxBytes);
    }
    Result<quint64> endOf(qint64 runId) override { return m_files->endOf(runId); }
    const RunLogLimits &limits() const override { return m_files->limits(); }
    qint64 diskBytes() const override { return m_files->diskBytes(); }
    qint64 diskBytesOf(qint64 runId) const override { return m_files->diskBytesOf(runId); }
    quint64 bytesRead() const override { return m_files->bytesRead(); }

private:
    std::unique_ptr<FileRunLogStore> m_files;
};

// Output of `count` records of `size` bytes each, from offset 0.
QList<LogRecord> output(int count, int size)
{
    QList<LogRecord> records;
    quint64 offset = 0;
    for (int i = 0; i < count; ++i) {
        QByteArray bytes(size, char('a' + i % 26));
        records.append(LogRecord::data(LogRecordKind::Stdout, offset, bytes));
        offset += size;
    }
    return records;
}

QByteArray storedBytes(RunLogStore &store)
{
    QByteArray out;
    quint64 from = 0;
    for (;;) {
        auto page = store.read(kRun, from, 1 << 20);
        if (!page || page->records.isEmpty())
            return out;
        for (const LogRecord &record : std::as_const(page->records)) {
            out += record.payload;
            from = record.end();
        }
    }
}

} // namespace

class TestRunLogReceiver final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void outputIsStoredAndEachStoreIsTold();
    void outputThatCannotBeStoredWaitsAndClosesTheWindowThenArrivesWhole();

private:
    // Sends the records on a new log channel; the receiver on the hub's side.
    tunnel::Channel *openLog();
    void send(const QList<LogRecord> &records);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<SwitchableStore> m_store;
    std::unique_ptr<testing::MultiplexerPair> m_pair;
    tunnel::Channel *m_agentChannel = nullptr; // owned by the daemon's multiplexer
    RunLogReceiver *m_receiver = nullptr; // owned by the hub's channel
    QList<qint64> m_stored;
};

void TestRunLogReceiver::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    auto files = FileRunLogStore::open(
        m_dir->path(), RunLogLimits::unbounded(), [] { return QSet<qint64> { kRun }; });
    QVERIFY2(files, qPrintable(files ? QString() : files.error().message));
    m_store = std::make_unique<SwitchableStore>(std::move(*files));
    m_pair = std::make_unique<testing::MultiplexerPair>();
    m_stored.clear();
    m_receiver = nullptr;
    connect(&m_pair->hub, &tunnel::ChannelMultiplexer::channelRequested, this,
        [this](tunnel::Channel *channel) {
            channel->accept();
            m_receiver = new RunLogReceiver(kRun, 0, channel, *m_store);
            connect(m_receiver, &RunLogReceiver::stored, this,
                [this](qint64 end) { m_stored.append(end); });
        });
    auto opened = m_pair->daemon.openChannel(protocol::RunLogOpen { kRun });
    QVERIFY(opened);
    m_agentChannel = *opened;
    QTRY_VERIFY(m_receiver != nullptr);
}

void TestRunLogReceiver::cleanup()
{
    m_agentChannel = nullptr;
    m_receiver = nullptr;
    m_pair.reset();
    m_store.reset();
    m_dir.reset();
}

void TestRunLogReceiver::send(const QList<LogRecord> &records)
{
    for (const LogRecord &record : records)
        QVERIFY(m_agentChannel->write(protocol::encodeLogRecord(record)));
}

void TestRunLogReceiver::outputIsStoredAndEachStoreIsTold()
{
    const QList<LogRecord> records = output(40, 1000);
    send(records);
    QTRY_COMPARE(m_stored.isEmpty() ? 0 : m_stored.last(), qint64(40'000));
    // Each end told is further than the one before.
    QVERIFY(std::is_sorted(m_stored.begin(), m_stored.end()));
    QCOMPARE(std::adjacent_find(m_stored.begin(), m_stored.end()), m_stored.end());
    QByteArray expected;
    for (const LogRecord &record : records)
        expected += record.payload;
    QCOMPARE(storedBytes(*m_store), expected);
}

void TestRunLogReceiver::outputThatCannotBeStoredWaitsAndClosesTheWindowThenArrivesWhole()
{
    // Given a store that refuses every append …
    m_store->full = true;
    // … output well past the channel's window (256 KiB) …
    const QList<LogRecord> records = output(100, 8 * 1024);
    send(records);
    // … is neither stored nor told stored; the store is tried again, and
    // the sender runs out of credit instead of the hub reading on.
    QTRY_VERIFY(m_store->refusedAppends >= 3);
    QTRY_COMPARE(m_agentChannel->sendCredit(), 0u);
    QVERIFY(m_agentChannel->queuedBytes() > 0);
    QVERIFY(m_stored.isEmpty());
    QVERIFY(m_receiver->waitingRecords() > 0);
    const auto end = m_store->endOf(kRun);
    QVERIFY(end);
    QCOMPARE(*end, quint64(0));

    // When space returns, everything arrives, once and in order.
    m_store->full = false;
    QTRY_COMPARE_WITH_TIMEOUT(
        m_stored.isEmpty() ? 0 : m_stored.last(), qint64(100 * 8 * 1024), 10'000);
    QByteArray expected;
    for (const LogRecord &record : records)
        expected += record.payload;
    QCOMPARE(storedBytes(*m_store), expected);
    QCOMPARE(m_receiver->waitingRecords(), 0);
}

QTEST_MAIN(TestRunLogReceiver)
#include "tst_runlogreceiver.moc"
