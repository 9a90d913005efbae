// Words from the hub or from a person (a request's reason, a forwarder's
// name, a deny or revoke reason, the hub's error messages) show in the
// dashboard as written: markup in them is text, never formatting, links or
// images. Each screen is filled from records as the hub sends them, with
// markup in every field a person chose; no hub is needed.

#include "app-dashboard/core/eventsubscription.h"
#include "app-dashboard/core/forwardersclient.h"
#include "app-dashboard/core/hubapi.h"
#include "app-dashboard/core/jsonlisting.h"
#include "app-dashboard/core/jsontablemodel.h"
#include "app-dashboard/ui/approvalspage.h"
#include "app-dashboard/ui/approvedialog.h"
#include "app-dashboard/ui/auditpage.h"
#include "app-dashboard/ui/forwardercard.h"
#include "app-dashboard/ui/forwarderspage.h"
#include "app-dashboard/ui/mainwindow.h"
#include "app-dashboard/ui/projectspage.h"
#include "app-dashboard/ui/reasondialog.h"
#include "app-dashboard/ui/recordtable.h"
#include "app-dashboard/ui/statechip.h"

#include <QAccessible>
#include <QApplication>
#include <QDialog>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTest>
#include <QTextDocument>

using namespace cloop;
using namespace cloop::dashboard;

namespace {

// Bold, a link and an image: what a label would render if it took them for
// rich text. (No '&': accessible names drop it as a mnemonic.)
const QString kReason = QStringLiteral(
    "<b>urgent</b> see <a href=\"https://example.org/x\">this</a><img src=\"x.png\">");
const QString kForwarder = QStringLiteral("<b>bench</b>-hsm<img src=\"x.png\">");
const QString kProject = QStringLiteral("/srv/projects/<i>bench</i>");
const QString kPerson = QStringLiteral("<a href=\"https://example.org\">maria</a>");
const QString kDenial
    = QStringLiteral("<img src=\"/etc/x.png\"><b>no</b>, use the <u>other</u> one");
// Unquoted, so that it reads the same inside the audit entry's JSON.
const QString kRevocation = QStringLiteral("<b>stolen</b> <a href=https://example.org>details</a>");
const QString kHubError = QStringLiteral("<h1>refused</h1><img src=\"x.png\">");

// What a label presents to a person: the text as its accessible name, which
// Qt derives from what it renders (markup stripped when it renders rich text).
QString presented(QLabel *label)
{
    QAccessibleInterface *accessible = QAccessible::queryAccessibleInterface(label);
    return accessible ? accessible->text(QAccessible::Name) : QString();
}

// Every label under `root` showing `needle` shows it as written; there are
// at least `atLeast` of them.
void expectShownAsWritten(QWidget *root, const QString &needle, int atLeast)
{
    int seen = 0;
    const QList<QLabel *> labels = root->findChildren<QLabel *>();
    for (QLabel *label : labels) {
        if (!label->text().contains(needle))
            continue;
        ++seen;
        QVERIFY2(label->textFormat() == Qt::PlainText,
            qPrintable(QStringLiteral("a label shows \"%1\" as rich text").arg(label->text())));
        QVERIFY2(presented(label).contains(needle), qPrintable(presented(label)));
    }
    QVERIFY2(seen >= atLeast,
        qPrintable(
            QStringLiteral("%1 labels show \"%2\", not %3").arg(seen).arg(needle).arg(atLeast)));
}

// A widget's tooltip, which Qt renders as rich text when it looks like
// markup, reads `needle` as written.
void expectToolTipShownAsWritten(QWidget *widget, const QString &needle)
{
    QVERIFY(widget);
    const QString tip = widget->toolTip();
    QTextDocument rendered;
    if (Qt::mightBeRichText(tip))
        rendered.setHtml(tip);
    else
        rendered.setPlainText(tip);
    QVERIFY2(rendered.toPlainText().contains(needle), qPrintable(tip));
}

// A table shows cells as written: the view draws them with the plain
// delegate, and its tooltip, which Qt renders as rich text when it looks
// like markup, is escaped so that it reads as the cell does.
void expectCellShownAsWritten(RecordTable *table, const QString &needle)
{
    QTableView *view = table->view();
    QCOMPARE(QString::fromLatin1(view->itemDelegate()->metaObject()->className()),
        QStringLiteral("QStyledItemDelegate"));
    QAbstractItemModel *model = view->model();
    bool found = false;
    for (int row = 0; row < model->rowCount(); ++row) {
        for (int column = 0; column < model->columnCount(); ++column) {
            const QModelIndex at = model->index(row, column);
            const QString text = at.data(Qt::DisplayRole).toString();
            if (!text.contains(needle))
                continue;
            found = true;
            const QString tip = at.data(Qt::ToolTipRole).toString();
            QVERIFY(Qt::mightBeRichText(tip));
            QTextDocument rendered;
            rendered.setHtml(tip);
            QCOMPARE(rendered.toPlainText(), text);
        }
    }
    QVERIFY2(found, qPrintable(needle));
}

JsonTableModel *modelOf(RecordTable *table)
{
    auto *proxy = qobject_cast<QSortFilterProxyModel *>(table->view()->model());
    return proxy ? qobject_cast<JsonTableModel *>(proxy->sourceModel()) : nullptr;
}

QPushButton *buttonNamed(QWidget *root, const QString &text)
{
    const QList<QPushButton *> buttons = root->findChildren<QPushButton *>();
    for (QPushButton *button : buttons) {
        if (button->text() == text)
            return button;
    }
    return nullptr;
}

QJsonObject request()
{
    return { { QStringLiteral("id"), 7 }, { QStringLiteral("forwarder"), kForwarder },
        { QStringLiteral("forwarder_id"), 3 }, { QStringLiteral("project"), kProject },
        { QStringLiteral("requested_by"), kPerson }, { QStringLiteral("reason"), kReason },
        { QStringLiteral("ttl"), QStringLiteral("8h") },
        { QStringLiteral("ttl_seconds"), 8 * 3600 },
        { QStringLiteral("virtual_executor"), QString() },
        { QStringLiteral("state"), QStringLiteral("denied") },
        { QStringLiteral("decided_by"), QStringLiteral("alice") },
        { QStringLiteral("decision_reason"), kDenial },
        { QStringLiteral("created_at"), QStringLiteral("2026-11-29T12:00:00.000Z") } };
}

QJsonObject forwarder()
{
    return { { QStringLiteral("id"), 3 }, { QStringLiteral("name"), kForwarder },
        { QStringLiteral("device"),
            QJsonObject { { QStringLiteral("kind"), QStringLiteral("l2") },
                { QStringLiteral("interface"), QStringLiteral("eth1") } } },
        { QStringLiteral("device_description"), QStringLiteral("l2 <b>eth1</b>") },
        { QStringLiteral("state"), QStringLiteral("connected") },
        { QStringLiteral("connected"), true },
        { QStringLiteral("hub_member"), QStringLiteral("<b>hub-2</b>:7443") } };
}

QJsonObject binding()
{
    return { { QStringLiteral("id"), 11 }, { QStringLiteral("forwarder_id"), 3 },
        { QStringLiteral("forwarder"), kForwarder }, { QStringLiteral("project"), kProject },
        { QStringLiteral("state"), QStringLiteral("active") },
        { QStringLiteral("virtual_executor"), QStringLiteral("<i>ci</i>") },
        { QStringLiteral("created_by"), kPerson },
        { QStringLiteral("expires_at"), QStringLiteral("2099-11-30T08:00:00.000Z") } };
}

} // namespace

class TestPlainText final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void theApproverReadsTheReasonAsWritten();
    void aDenyReasonReachesTheRequesterAsWritten();
    void aForwardersCardAndItsDialogsShowNamesAsWritten();
    void theHubsErrorMessagesShowAsWritten();
    void projectsAndPeopleShowAsWritten();

private:
    std::unique_ptr<HubApi> m_api;
    std::unique_ptr<EventSubscription> m_events; // never started
    std::unique_ptr<ForwardersClient> m_forwarders;
};

void TestPlainText::initTestCase()
{
    // The pages hand out the dialogs they open as a QDialog *.
    qRegisterMetaType<QDialog *>();
}

void TestPlainText::init()
{
    // No hub: whatever the screens ask for fails, which is fine here.
    m_api = std::make_unique<HubApi>();
    m_events = std::make_unique<EventSubscription>();
    m_forwarders = std::make_unique<ForwardersClient>(m_api.get(), m_events.get());
}

void TestPlainText::cleanup()
{
    m_forwarders.reset();
    m_events.reset();
    m_api.reset();
}

void TestPlainText::theApproverReadsTheReasonAsWritten()
{
    // Given a request in the approver's inbox whose fields carry markup …
    ApprovalsPage page(m_api.get(), m_events.get(), m_forwarders.get());
    QJsonObject pending = request();
    pending.insert(QStringLiteral("state"), QStringLiteral("pending"));
    modelOf(page.inbox())->setRecords({ pending });
    expectCellShownAsWritten(page.inbox(), kReason);
    QVERIFY(page.inbox()->selectRecord(7));

    // … the Approve dialog shows each as written: reason, forwarder, project, requester.
    QSignalSpy opened(&page, &ApprovalsPage::dialogOpened);
    QTest::mouseClick(buttonNamed(&page, ApprovalsPage::tr("&Approve…")), Qt::LeftButton);
    QCOMPARE(opened.size(), 1);
    auto *dialog = qobject_cast<ApproveDialog *>(opened.first().first().value<QDialog *>());
    QVERIFY(dialog);
    expectShownAsWritten(dialog, kReason, 1);
    expectShownAsWritten(dialog, kForwarder, 1);
    expectShownAsWritten(dialog, kProject, 1);
    expectShownAsWritten(dialog, kPerson, 1);
    dialog->close();

    // So does the Deny dialog, which names the requester and what was asked.
    QTest::mouseClick(buttonNamed(&page, ApprovalsPage::tr("&Deny…")), Qt::LeftButton);
    QCOMPARE(opened.size(), 2);
    auto *deny = opened.last().first().value<QDialog *>();
    expectShownAsWritten(deny, kPerson, 1);
    expectShownAsWritten(deny, kForwarder, 1);
    deny->close();
}

void TestPlainText::aDenyReasonReachesTheRequesterAsWritten()
{
    ApprovalsPage page(m_api.get(), m_events.get(), m_forwarders.get());
    modelOf(page.mine())->setRecords({ request() });
    modelOf(page.history())->setRecords({ request() });
    expectCellShownAsWritten(page.mine(), kDenial);
    expectCellShownAsWritten(page.mine(), kReason);
    expectCellShownAsWritten(page.history(), kDenial);

    // A revocation's reason reaches the audit log as written too.
    AuditPage audit(m_api.get());
    auto *table = audit.findChild<RecordTable *>();
    QVERIFY(table);
    modelOf(table)->setRecords({ QJsonObject { { QStringLiteral("id"), 1 },
        { QStringLiteral("at"), QStringLiteral("2026-11-29T12:00:00.000Z") },
        { QStringLiteral("actor"), QStringLiteral("user:alice") },
        { QStringLiteral("action"), QStringLiteral("forwarder.revoke") },
        { QStringLiteral("subject"), QStringLiteral("forwarder:3") },
        { QStringLiteral("details"),
            QJsonObject { { QStringLiteral("reason"), kRevocation } } } } });
    expectCellShownAsWritten(table, kRevocation);
}

void TestPlainText::aForwardersCardAndItsDialogsShowNamesAsWritten()
{
    // Given a forwarder whose name, device, hub and binding carry markup …
    ForwardersPage page(m_api.get(), m_forwarders.get());
    m_forwarders->model()->setForwarders({ forwarder() });
    m_forwarders->model()->setBindings({ binding() });
    m_forwarders->model()->setTestOutcome(3,
        cloop::dashboard::TestOutcome { true, QDateTime::currentDateTimeUtc(),
            QStringLiteral("link up · <b>carrier</b>"),
            QStringLiteral("link up · <b>carrier</b>") });
    QCOMPARE(page.cards().size(), 1);
    // (Wide enough that the one-line Test result is not elided.)
    page.resize(1600, 600);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    ForwarderCard *card = page.cards().first();
    // … its card shows every one as written …
    expectShownAsWritten(card, kForwarder, 1);
    expectShownAsWritten(card, QStringLiteral("l2 <b>eth1</b>"), 1);
    // The hub member holding its session is in the state chip's tooltip.
    expectToolTipShownAsWritten(card->stateChip(), QStringLiteral("<b>hub-2</b>:7443"));
    expectShownAsWritten(card, kProject, 1);
    expectShownAsWritten(card, kPerson, 1);
    expectShownAsWritten(card, QStringLiteral("<i>ci</i>"), 1);
    expectShownAsWritten(card, QStringLiteral("<b>carrier</b>"), 1);
    expectToolTipShownAsWritten(
        card->findChild<QLabel *>(QStringLiteral("testResult")), QStringLiteral("<b>carrier</b>"));
    // A disabled action's reason names the project as written too.
    QVERIFY(!card->bindButton()->isEnabled());
    expectToolTipShownAsWritten(card->bindButton(), kProject);

    // … and so do the Revoke and Unbind dialogs, which name it and the project.
    QSignalSpy opened(&page, &ForwardersPage::dialogOpened);
    QTest::mouseClick(card->revokeButton(), Qt::LeftButton);
    QTest::mouseClick(card->unbindButton(), Qt::LeftButton);
    QCOMPARE(opened.size(), 2);
    for (const QList<QVariant> &signal : std::as_const(opened)) {
        auto *dialog = signal.first().value<QDialog *>();
        expectShownAsWritten(dialog, kForwarder, 1);
        expectShownAsWritten(dialog, kProject, 1);
        dialog->close();
    }
}

void TestPlainText::theHubsErrorMessagesShowAsWritten()
{
    // A refusal from the hub, shown where the action was asked for.
    ReasonDialog dialog(QStringLiteral("Revoke"), QStringLiteral("what happens"),
        QStringLiteral("Revoke"), true, [](const QString &, QObject *, HubApi::Callback done) {
            done(Error::make(QStringLiteral("forbidden"), kHubError));
        });
    QTest::keyClicks(dialog.findChild<QLineEdit *>(QStringLiteral("reason")), kRevocation);
    QTest::mouseClick(dialog.actionButton(), Qt::LeftButton);
    expectShownAsWritten(&dialog, kHubError, 1);

    // A list the hub would not give.
    ApprovalsPage page(m_api.get(), m_events.get(), m_forwarders.get());
    const QList<JsonListing *> listings = page.findChildren<JsonListing *>();
    QVERIFY(!listings.isEmpty());
    Q_EMIT listings.first()->errorChanged(kHubError);
    expectShownAsWritten(&page, kHubError, 1);
    // And the forwarders' list.
    ForwardersPage forwarders(m_api.get(), m_forwarders.get());
    Q_EMIT m_forwarders->errorChanged(kHubError);
    expectShownAsWritten(&forwarders, kHubError, 1);
}

void TestPlainText::projectsAndPeopleShowAsWritten()
{
    // The window names who is signed in; the Projects page, the project chosen.
    const QJsonObject identity { { QStringLiteral("user"), kPerson },
        { QStringLiteral("hub_admin"), true } };
    MainWindow window(m_api.get(), identity);
    expectShownAsWritten(&window, kPerson, 1);
    ProjectsPage *projects = window.projectsPage();
    modelOf(projects->projects())
        ->setRecords(
            { QJsonObject { { QStringLiteral("id"), 5 }, { QStringLiteral("path"), kProject } } });
    QVERIFY(projects->projects()->selectRecord(5));
    expectShownAsWritten(projects, kProject, 1);
    expectCellShownAsWritten(projects->projects(), kProject);
}

QTEST_MAIN(TestPlainText)
#include "tst_plaintext.moc"
