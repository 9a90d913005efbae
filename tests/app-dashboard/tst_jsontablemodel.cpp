// JsonTableModel: API records as table rows keyed by id, updated in place,
// shown and sorted column by column; checked by QAbstractItemModelTester.

#include "app-dashboard/core/jsontablemodel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

using cloop::dashboard::JsonTableModel;

namespace {

QJsonObject entry(qint64 id, const QString &who, const QString &at)
{
    return { { QStringLiteral("id"), id }, { QStringLiteral("actor"), who },
        { QStringLiteral("at"), at } };
}

} // namespace

class TestJsonTableModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void recordsBecomeRowsKeyedById();
    void columnsShowAndSortTheirWay();
};

void TestJsonTableModel::recordsBecomeRowsKeyedById()
{
    JsonTableModel model(
        { cloop::dashboard::textColumn(QStringLiteral("Who"), QStringLiteral("actor")),
            cloop::dashboard::timeColumn(QStringLiteral("When"), QStringLiteral("at")) });
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setRecords(
        { entry(1, QStringLiteral("user:alice"), QStringLiteral("2026-11-29T10:00:00.000Z")),
            entry(2, QStringLiteral("hub"), QStringLiteral("2026-11-29T11:00:00.000Z")) });
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.columnCount(), 2);
    QCOMPARE(model.headerData(0, Qt::Horizontal).toString(), QStringLiteral("Who"));
    QCOMPARE(model.index(1, 0).data().toString(), QStringLiteral("hub"));
    QCOMPARE(model.index(1, 0)
                 .data(JsonTableModel::RecordRole)
                 .toJsonObject()
                 .value(QLatin1String("id"))
                 .toInteger(),
        2);

    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    // 1 goes, 2 changes, 3 and 4 arrive together.
    model.setRecords(
        { entry(2, QStringLiteral("user:bob"), QStringLiteral("2026-11-29T11:00:00.000Z")),
            entry(3, QStringLiteral("forwarder:4"), QStringLiteral("2026-11-29T12:00:00.000Z")),
            entry(4, QStringLiteral("hub"), QStringLiteral("2026-11-29T13:00:00.000Z")),
            QJsonObject {} });
    QCOMPARE(reset.count(), 0);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.rowOf(1), -1);
    QCOMPARE(model.index(model.rowOf(2), 0).data().toString(), QStringLiteral("user:bob"));
    QCOMPARE(model.record(99), QJsonObject());
}

void TestJsonTableModel::columnsShowAndSortTheirWay()
{
    JsonTableModel model({ cloop::dashboard::textColumn(QStringLiteral("Id"), QStringLiteral("id")),
        cloop::dashboard::timeColumn(QStringLiteral("When"), QStringLiteral("at")) });
    model.setRecords({ entry(7, QString(), QStringLiteral("2026-11-29T10:00:00.000Z")),
        entry(8, QString(), QStringLiteral("garbage")) });
    // Numbers show as numbers, times in local time, sorted by the instant.
    QCOMPARE(model.index(0, 0).data().toString(), QStringLiteral("7"));
    QVERIFY(!model.index(0, 1).data().toString().isEmpty());
    QCOMPARE(model.index(0, 1).data(JsonTableModel::SortRole).toLongLong(),
        QDateTime::fromString(QStringLiteral("2026-11-29T10:00:00.000Z"), Qt::ISODateWithMs)
            .toMSecsSinceEpoch());
    // A time that is not one shows nothing rather than nonsense.
    QCOMPARE(model.index(1, 1).data().toString(), QString());
    QCOMPARE(model.index(0, 0).data(JsonTableModel::SortRole).toString(), QStringLiteral("7"));
}

QTEST_GUILESS_MAIN(TestJsonTableModel)
#include "tst_jsontablemodel.moc"
