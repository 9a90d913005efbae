// The dashboard as a user drives it, against a real hub on 127.0.0.1: sign
// in, + Enroll forwarder, watch the card turn live, Bind…, Unbind with a
// reason, Test, see it grey out, Revoke. Clicks go to the real widgets.
// With CLOOP_SCREENSHOT_DIR set, each screen is saved there as a PNG.

#include "app-dashboard/core/forwardersclient.h"
#include "app-dashboard/core/hubapi.h"
#include "app-dashboard/core/jsontablemodel.h"
#include "app-dashboard/core/tokenstore.h"
#include "app-dashboard/ui/appearance.h"
#include "app-dashboard/ui/approvalspage.h"
#include "app-dashboard/ui/approvedialog.h"
#include "app-dashboard/ui/auditpage.h"
#include "app-dashboard/ui/binddialog.h"
#include "app-dashboard/ui/dashboardsession.h"
#include "app-dashboard/ui/enrolldialog.h"
#include "app-dashboard/ui/enrollmentcommandview.h"
#include "app-dashboard/ui/executorenrolldialog.h"
#include "app-dashboard/ui/executorspage.h"
#include "app-dashboard/ui/forwardercard.h"
#include "app-dashboard/ui/forwarderspage.h"
#include "app-dashboard/ui/language.h"
#include "app-dashboard/ui/mainwindow.h"
#include "app-dashboard/ui/projectspage.h"
#include "app-dashboard/ui/reasondialog.h"
#include "app-dashboard/ui/recordtable.h"
#include "app-dashboard/ui/signindialog.h"
#include "app-dashboard/ui/statechip.h"
#include "app-dashboard/ui/trafficgraph.h"
#include "app-dashboard/ui/upgradedialog.h"
#include "support/testrig.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QMetaMethod>
#include <QPointer>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QVBoxLayout>

#include <unistd.h>

using namespace cloop;
using namespace cloop::dashboard;
using namespace cloop::testing;

namespace {

const QString kProject = QStringLiteral("/srv/projects/bench");

void click(QAbstractButton *button)
{
    QVERIFY(button);
    QVERIFY2(button->isEnabled(), qPrintable(button->text() + QLatin1String(" is disabled")));
    QTest::mouseClick(button, Qt::LeftButton);
}

void type(QLineEdit *edit, const QString &text)
{
    edit->clear();
    QTest::keyClicks(edit, text);
}

// CLOOP_SCREENSHOT_THEME=dark takes them in the dark palette, named dark-*.
// What Tab visits in `dialog`, from its first field: the focusable, shown
// and enabled widgets in focus-chain order.
QList<QWidget *> tabOrder(QWidget *dialog)
{
    QList<QWidget *> order;
    QWidget *at = dialog;
    while ((at = at->nextInFocusChain()) != dialog) {
        if ((at->focusPolicy() & Qt::TabFocus) && at->isVisibleTo(dialog) && at->isEnabled())
            order.append(at);
    }
    return order;
}

// The id of the record a table shows first.
qint64 firstRecordId(RecordTable *table)
{
    return table->view()
        ->model()
        ->index(0, 0)
        .data(JsonTableModel::RecordRole)
        .toJsonObject()
        .value(QLatin1String("id"))
        .toInteger();
}

// Every screen the tests reached, named as its screenshot.
QSet<QString> &screensReached()
{
    static QSet<QString> names;
    return names;
}

void screenshot(QWidget *widget, const QString &name)
{
    screensReached().insert(name);
    const QString folder = qEnvironmentVariable("CLOOP_SCREENSHOT_DIR");
    if (folder.isEmpty())
        return;
    QApplication::processEvents();
    // A widget shown or hidden asks its layout, which asks its parent's, one
    // posted event at a time: the picture waits until every layout settled
    // (and nothing else happens meanwhile: a dialog answered stays open).
    for (int pass = 0; pass < 8; ++pass)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    const QString theme = qEnvironmentVariable("CLOOP_SCREENSHOT_THEME");
    const QString prefix = theme.isEmpty() ? QString() : theme + QLatin1Char('-');
    widget->grab().save(folder + QLatin1Char('/') + prefix + name + QLatin1String(".png"));
}

} // namespace

class TestDashboardWindow final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void cleanup();
    void signInRefusesAWrongTokenAndAcceptsTheRightOne();
    void aFirstSignInShowsTheHubsKeyBeforeSendingTheToken();
    void withoutAKeyringTheTokenIsNotKeptAndThePersonIsTold();
    void signingOutReturnsToSignInWithTheHubRemembered();
    void aForwardersWholeLifeThroughTheWindow();
    void aMaintainersRequestIsApprovedByAnotherAdministrator();
    void aCardDrawsTheTrafficTheHubCounted();

private:
    QString hubUrl() const;
    // A user with `role` in kProject and an API token of their own.
    QString addPerson(const QString &name, const QString &role);
    // Signs in through the dialog; the identity the hub answered.
    QJsonObject signIn(HubApi &api, const QString &token);

    std::unique_ptr<TestRig> m_rig;
    int m_functionsPassed = 0;
};

void TestDashboardWindow::initTestCase()
{
    // No desktop session bus, whatever the machine has: the keyring test
    // expects none, and no test may touch a real keyring.
    qputenv("DBUS_SESSION_BUS_ADDRESS", "unix:abstract=cloop-test-no-such-bus");
    if (const auto theme = themeNamed(qEnvironmentVariable("CLOOP_SCREENSHOT_THEME")))
        applyTheme(*qApp, *theme);
    // In English, as the dashboard starts by default (its plurals are the
    // translation's: "1 frame", "6 frames").
    QCOMPARE(installTranslations(QStringLiteral("en")), QStringLiteral("en"));
}

// The pictures in docs/screenshots are the screens the tests reach: each
// reached screen has one in both palettes, and, when every test ran and
// passed, no picture shows a screen the tests no longer reach.
// tests/app-dashboard/screenshots.sh takes them all again.
void TestDashboardWindow::cleanupTestCase()
{
    if (!qEnvironmentVariable("CLOOP_SCREENSHOT_DIR").isEmpty())
        return; // taking them, one palette at a time
    const QDir pictures(QStringLiteral(CLOOP_SOURCE_DIR "/docs/screenshots"));
    QStringList reached = screensReached().values();
    reached.sort();
    for (const QString &name : std::as_const(reached)) {
        for (const QString &file :
            { name + QLatin1String(".png"), QLatin1String("dark-") + name + QLatin1String(".png") })
            QVERIFY2(pictures.exists(file),
                qPrintable(QStringLiteral("docs/screenshots/%1 is missing: the tests reach that "
                                          "screen; run tests/app-dashboard/screenshots.sh")
                               .arg(file)));
    }
    int functions = 0;
    const QMetaObject *self = metaObject();
    for (int at = self->methodOffset(); at < self->methodCount(); ++at) {
        const QMetaMethod method = self->method(at);
        const QByteArray name = method.name();
        if (method.methodType() == QMetaMethod::Slot && method.access() == QMetaMethod::Private
            && name != "initTestCase" && name != "cleanupTestCase" && name != "init"
            && name != "cleanup")
            ++functions;
    }
    if (m_functionsPassed < functions)
        return; // some did not run (or failed): they may reach more screens
    const QStringList files = pictures.entryList({ QStringLiteral("*.png") }, QDir::Files);
    for (const QString &file : files) {
        QString name = file.chopped(4);
        if (name.startsWith(QLatin1String("dark-")))
            name.remove(0, 5);
        QVERIFY2(screensReached().contains(name),
            qPrintable(QStringLiteral("docs/screenshots/%1 shows a screen no test reaches: "
                                      "remove it or reach it")
                           .arg(file)));
    }
}

void TestDashboardWindow::init()
{
    m_rig = std::make_unique<TestRig>();
    // Traffic in one-second steps: the cards' graphs get their first soon.
    m_rig->hub().setServeArguments({ QStringLiteral("--traffic-step"), QStringLiteral("1s") });
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    CLOOP_COMPARE_EXIT(
        m_rig->hub().cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }), 0);
}

void TestDashboardWindow::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

QString TestDashboardWindow::hubUrl() const
{
    return QStringLiteral("wss://127.0.0.1:%1").arg(m_rig->hub().port());
}

QString TestDashboardWindow::addPerson(const QString &name, const QString &role)
{
    HubProcess &hub = m_rig->hub();
    if (hub.cli({ QStringLiteral("user"), QStringLiteral("add"), name }).exitCode != 0)
        return {};
    if (hub.cli({ QStringLiteral("project"), QStringLiteral("grant"), kProject,
                    QStringLiteral("--user"), name, QStringLiteral("--role"), role })
            .exitCode
        != 0)
        return {};
    return hub
        .cliJson(
            { QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--user"), name,
                QStringLiteral("--label"), QStringLiteral("dashboard"), QStringLiteral("--json") })
        .toObject()
        .value(QLatin1String("token"))
        .toString();
}

QJsonObject TestDashboardWindow::signIn(HubApi &api, const QString &token)
{
    SignInDialog dialog(&api, nullptr);
    dialog.setHub(hubUrl(), m_rig->hub().pin());
    dialog.setToken(token);
    QSignalSpy accepted(&dialog, &QDialog::accepted);
    QTest::mouseClick(dialog.actionButton(), Qt::LeftButton);
    if (!QTest::qWaitFor([&] { return accepted.count() == 1; }, kLongWaitMs))
        return {};
    return dialog.identity();
}

void TestDashboardWindow::signInRefusesAWrongTokenAndAcceptsTheRightOne()
{
    HubApi api;
    SignInDialog dialog(&api, nullptr);
    dialog.show();
    QPushButton *signIn = dialog.buttons()->button(QDialogButtonBox::Ok);
    QVERIFY(!signIn->isEnabled());
    // A plaintext address to another machine is refused as typed.
    type(dialog.urlEdit(), QStringLiteral("ws://192.0.2.1:8443"));
    QVERIFY(dialog.messageLabel()->text().contains(QLatin1String("plaintext")));
    type(dialog.urlEdit(), hubUrl());
    type(dialog.pinEdit(), m_rig->hub().pin());
    type(dialog.tokenEdit(), QStringLiteral("cat_wrong"));
    screenshot(&dialog, QStringLiteral("sign-in"));
    click(signIn);
    QVERIFY(QTest::qWaitFor(
        [&] { return dialog.messageLabel()->text().startsWith(QLatin1String("Not signed in")); },
        kLongWaitMs));
    QVERIFY(dialog.isVisible());
    // Nothing typed was lost; the right token signs in.
    QCOMPARE(dialog.urlEdit()->text(), hubUrl());
    type(dialog.tokenEdit(), m_rig->hub().adminToken());
    QSignalSpy accepted(&dialog, &QDialog::accepted);
    click(signIn);
    QVERIFY(QTest::qWaitFor([&] { return accepted.count() == 1; }, kLongWaitMs));
    QCOMPARE(dialog.identity().value(QLatin1String("hub_admin")).toBool(), true);
}

void TestDashboardWindow::aFirstSignInShowsTheHubsKeyBeforeSendingTheToken()
{
    HubApi api;
    SignInDialog dialog(&api, nullptr);
    dialog.show();
    type(dialog.urlEdit(), hubUrl());
    type(dialog.tokenEdit(), m_rig->hub().adminToken());
    QVERIFY(dialog.needsKeyCheck());
    QVERIFY(dialog.actionButton()->text().contains(QLatin1String("key")));
    QSignalSpy accepted(&dialog, &QDialog::accepted);
    click(dialog.actionButton());
    // The key's pin is shown to be compared; nothing is signed in yet.
    QVERIFY(QTest::qWaitFor([&] { return !dialog.pinEdit()->text().isEmpty(); }, kLongWaitMs));
    QCOMPARE(dialog.pinEdit()->text(), m_rig->hub().pin());
    // It is shown in groups of four, as people compare it, in its own panel.
    QVERIFY(dialog.keyPanel()->isVisible());
    QCOMPARE(dialog.keyPinLabel()->text(), groupedPin(m_rig->hub().pin()));
    QCOMPARE(QString(dialog.keyPinLabel()->text()).remove(QLatin1Char(' ')), m_rig->hub().pin());
    QCOMPARE(accepted.count(), 0);
    QCOMPARE(api.pendingCalls(), 0);
    // The words are plain (no markdown quotes), and the fields keep their
    // height with the key shown.
    const auto labels = dialog.findChildren<QLabel *>();
    for (const QLabel *label : labels)
        QVERIFY2(!label->text().contains(QLatin1Char('`')), qPrintable(label->text()));
    QApplication::processEvents();
    for (const QLineEdit *field : { dialog.urlEdit(), dialog.pinEdit(), dialog.tokenEdit() })
        QVERIFY2(field->height() >= field->sizeHint().height(),
            qPrintable(QStringLiteral("%1 is %2 px high, not %3")
                           .arg(field->objectName())
                           .arg(field->height())
                           .arg(field->sizeHint().height())));
    screenshot(&dialog, QStringLiteral("sign-in-key"));
    QCOMPARE(dialog.actionButton()->text(), QStringLiteral("&Trust this key and sign in"));
    click(dialog.actionButton());
    QVERIFY(QTest::qWaitFor([&] { return accepted.count() == 1; }, kLongWaitMs));
    QCOMPARE(dialog.identity().value(QLatin1String("user")).toString(), QStringLiteral("admin"));
}

void TestDashboardWindow::withoutAKeyringTheTokenIsNotKeptAndThePersonIsTold()
{
    // initTestCase took the session bus away, so no keyring is reachable.
    HubApi api;
    TokenStore tokens(QStringLiteral("cloop-dashboard-test"));
    SignInDialog dialog(&api, &tokens);
    dialog.show();
    QVERIFY(dialog.rememberBox()->isChecked());
    dialog.setHub(hubUrl(), m_rig->hub().pin());
    dialog.setToken(m_rig->hub().adminToken());
    QSignalSpy accepted(&dialog, &QDialog::accepted);
    click(dialog.actionButton());
    QVERIFY(QTest::qWaitFor(
        [&] { return dialog.messageLabel()->text().contains(QLatin1String("not kept")); },
        kLongWaitMs));
    QCOMPARE(accepted.count(), 0);
    QVERIFY2(dialog.messageLabel()->text().contains(QLatin1String("next time")),
        qPrintable(dialog.messageLabel()->text()));
    // It names the keyring, never a bare "Unknown error" that reads as the hub's.
    QVERIFY2(dialog.messageLabel()->text().contains(QLatin1String("keyring")),
        qPrintable(dialog.messageLabel()->text()));
    QVERIFY2(!dialog.messageLabel()->text().contains(QLatin1String("Unknown error")),
        qPrintable(dialog.messageLabel()->text()));
    screenshot(&dialog, QStringLiteral("sign-in-no-keyring"));
    click(dialog.actionButton());
    QCOMPARE(accepted.count(), 1);
    // And nothing can be read back.
    std::optional<Result<QString>> kept;
    tokens.load(hubUrl(), this, [&kept](const Result<QString> &token) { kept = token; });
    QVERIFY(QTest::qWaitFor([&] { return kept.has_value(); }, kLongWaitMs));
    QVERIFY(!*kept);
}

void TestDashboardWindow::signingOutReturnsToSignInWithTheHubRemembered()
{
    QTemporaryDir folder;
    QSettings settings(folder.filePath(QStringLiteral("dashboard.ini")), QSettings::IniFormat);
    HubApi api;
    DashboardSession session(&api, nullptr, &settings);
    session.start(m_rig->hub().adminToken());
    // Guarded: the dialog may be gone when the second one is compared with it.
    QPointer<SignInDialog> first = session.signInDialog();
    SignInDialog *firstDialog = first.data();
    QVERIFY(firstDialog && firstDialog->isVisible());
    QVERIFY(firstDialog->urlEdit()->text().isEmpty());
    type(firstDialog->urlEdit(), hubUrl());
    type(firstDialog->pinEdit(), m_rig->hub().pin());
    click(firstDialog->actionButton());
    QVERIFY(QTest::qWaitFor([&] { return session.window() != nullptr; }, kLongWaitMs));
    QPointer<MainWindow> window = session.window();
    QVERIFY(window->isVisible());
    QCOMPARE(settings.value(QStringLiteral("hub/url")).toString(), hubUrl());
    QCOMPARE(settings.value(QStringLiteral("hub/pin")).toString(), m_rig->hub().pin());

    // Session → Sign out.
    QAction *signOut = nullptr;
    for (QAction *action : window->menuBar()->actions().constFirst()->menu()->actions()) {
        if (action->text().remove(QLatin1Char('&')) == QLatin1String("Sign out"))
            signOut = action;
    }
    QVERIFY(signOut);
    signOut->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.isNull(); }, kLongWaitMs));
    SignInDialog *again = session.signInDialog();
    QVERIFY(again && again != first.data());
    QVERIFY(again->isVisible());
    // The hub and its pin are remembered; the token is not.
    QCOMPARE(again->urlEdit()->text(), hubUrl());
    QCOMPARE(again->pinEdit()->text(), m_rig->hub().pin());
    QVERIFY(again->tokenEdit()->text().isEmpty());
    QVERIFY(!again->actionButton()->isEnabled());
}

void TestDashboardWindow::aForwardersWholeLifeThroughTheWindow()
{
    HubApi api;
    const QJsonObject identity = signIn(api, m_rig->hub().adminToken());
    QVERIFY(!identity.isEmpty());
    MainWindow window(&api, identity);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    ForwardersPage *page = window.forwardersPage();
    QVERIFY(QTest::qWaitFor(
        [&] { return window.liveLabel()->text().contains(QLatin1String("live")); }, kLongWaitMs));
    QVERIFY(page->cards().isEmpty());
    screenshot(&window, QStringLiteral("forwarders-empty"));

    // + Enroll forwarder.
    QPointer<QDialog> opened;
    connect(
        page, &ForwardersPage::dialogOpened, this, [&opened](QDialog *dialog) { opened = dialog; });
    click(page->enrollButton());
    auto *enroll = qobject_cast<EnrollDialog *>(opened.data());
    QVERIFY(enroll);
    QPushButton *enrollOk = enroll->buttons()->button(QDialogButtonBox::Ok);
    // Tab walks the fields top to bottom and reaches the buttons last.
    type(enroll->nameEdit(), QStringLiteral("x"));
    type(enroll->deviceEdit(), QStringLiteral("1050:0407"));
    const QList<QWidget *> order = tabOrder(enroll);
    QVERIFY(order.size() >= 5);
    QCOMPARE(order.at(0), enroll->nameEdit());
    QCOMPARE(order.at(1), enroll->usbChoice());
    QVERIFY(order.indexOf(enroll->deviceEdit()) > order.indexOf(enroll->interfaceChoice()));
    QVERIFY(order.indexOf(enrollOk) > order.indexOf(enroll->deviceEdit()));
    QCOMPARE(order.indexOf(enrollOk), order.size() - 2);
    type(enroll->nameEdit(), QStringLiteral("Bench HSM"));
    QVERIFY(!enrollOk->isEnabled());
    type(enroll->nameEdit(), QStringLiteral("bench-hsm"));
    type(enroll->deviceEdit(), QStringLiteral("10:20"));
    QVERIFY(!enrollOk->isEnabled());
    QVERIFY(enroll->messageLabel()->text().contains(QLatin1String("hex")));
    type(enroll->deviceEdit(), QStringLiteral("1050:0407"));
    QVERIFY(enrollOk->isEnabled());
    screenshot(enroll, QStringLiteral("enroll"));
    click(enrollOk);
    QVERIFY(QTest::qWaitFor([&] { return !enroll->commandEdit()->text().isEmpty(); }, kLongWaitMs));
    QString command = enroll->commandEdit()->text();
    QVERIFY2(command.endsWith(QLatin1String("cloop forward --token-file forwarder.bundle")),
        qPrintable(command));
    QVERIFY2(!command.contains(QLatin1String("--bundle")), qPrintable(command));
    // Beside it, the same bundle for the machine's service.
    const QString install = enroll->installCommandEdit()->text();
    QVERIFY2(install.endsWith(QLatin1String("cloop forward install --token-file forwarder.bundle")),
        qPrintable(install));
    QCOMPARE(install.section(QLatin1Char('\''), 1, 1), command.section(QLatin1Char('\''), 1, 1));
    QVERIFY(enroll->validityLabel()->text().startsWith(QLatin1String("Valid until")));
    screenshot(enroll, QStringLiteral("enroll-command"));
    QSignalSpy enrollClosed(enroll, &QDialog::accepted);
    QCOMPARE(enroll->buttons()->buttons().size(), 1);
    click(enroll->actionButton());
    QCOMPARE(enrollClosed.count(), 1);

    // The card appears, awaiting enrollment, with its id: nothing to test
    // yet, but a new command can be had in case this one is lost.
    QVERIFY(QTest::qWaitFor([&] { return page->cards().size() == 1; }, kLongWaitMs));
    const qint64 id = page->cards().constFirst()->forwarderId();
    const auto card = [&] { return page->cardFor(id); };
    QCOMPARE(card()->stateText(), QStringLiteral("Awaiting enrollment"));
    QCOMPARE(card()->stateChip()->tone(), StateChip::Tone::Pending);
    QVERIFY(!card()->testButton()->isVisibleTo(card()));
    QVERIFY(card()->reenrollButton()->isVisibleTo(card()));
    QVERIFY(card()->reenrollButton()->isEnabled());
    QCOMPARE(card()->testText(), QStringLiteral("Not tested yet"));
    screenshot(&window, QStringLiteral("forwarders-awaiting"));

    // The command was lost: a new one replaces it, for the same forwarder.
    click(card()->reenrollButton());
    auto *reenroll = qobject_cast<EnrollDialog *>(opened.data());
    QVERIFY(reenroll);
    QVERIFY(reenroll->windowTitle().contains(QLatin1String("bench-hsm")));
    QVERIFY(!reenroll->nameEdit()->isVisibleTo(reenroll));
    QVERIFY(reenroll->actionButton()->isEnabled());
    click(reenroll->actionButton());
    QVERIFY(
        QTest::qWaitFor([&] { return !reenroll->commandEdit()->text().isEmpty(); }, kLongWaitMs));
    const QString firstCommand = command;
    command = reenroll->commandEdit()->text();
    QVERIFY(command != firstCommand);
    QVERIFY2(command.endsWith(QLatin1String("cloop forward --token-file forwarder.bundle")),
        qPrintable(command));
    QVERIFY(reenroll->validityLabel()->text().startsWith(QLatin1String("Valid until")));
    QVERIFY(reenroll->validityLabel()->text().endsWith(
        QLatin1String("The earlier command no longer works.")));
    screenshot(reenroll, QStringLiteral("reenroll-command"));
    click(reenroll->actionButton());
    QCOMPARE(page->cards().size(), 1);
    QCOMPARE(page->cards().constFirst()->forwarderId(), id);
    // On the device's machine, as the command says: the bundle in a file, then --token-file.
    const QString bundle
        = QRegularExpression(QStringLiteral("'(cloopfwd1\\.[^']+)'")).match(command).captured(1);
    QVERIFY2(!bundle.isEmpty(), qPrintable(command));
    const QString tokenFile = m_rig->path(QStringLiteral("forwarder.bundle"));
    {
        QFile file(tokenFile);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(bundle.toUtf8() + '\n');
        file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    }
    ForwarderProcess &forwarder
        = m_rig->addForwarder({ QStringLiteral("--token-file"), tokenFile });
    QVERIFY(forwarder.start());
    // This machine has no USB: connected, its device is unplugged.
    QVERIFY2(QTest::qWaitFor(
                 [&] { return card()->stateText() == QLatin1String("Unplugged"); }, kLongWaitMs),
        qPrintable(forwarder.describe()));
    QCOMPARE(card()->stateChip()->tone(), StateChip::Tone::Warning);
    QVERIFY(card()->testButton()->isVisibleTo(card()));
    QVERIFY(card()->testButton()->isEnabled());
    QVERIFY(!card()->reenrollButton()->isVisibleTo(card()));

    // Beside it, a segment forwarder on this machine's loopback: live.
    const Enrollment segment = m_rig->hub().enroll(
        QStringLiteral("lab-segment"), { QStringLiteral("--interface"), QStringLiteral("lo") });
    QVERIFY2(segment.ok, qPrintable(segment.error));
    ForwarderProcess &segmentForwarder
        = m_rig->addForwarder({ QStringLiteral("--bundle"), segment.bundle });
    QVERIFY(segmentForwarder.start());
    const auto segmentCard = [&] { return page->cardFor(segment.id); };
    QVERIFY2(
        QTest::qWaitFor(
            [&] { return segmentCard() && segmentCard()->stateText() == QLatin1String("Live"); },
            kLongWaitMs),
        qPrintable(segmentForwarder.describe()));
    QCOMPARE(segmentCard()->stateChip()->tone(), StateChip::Tone::Good);
    QVERIFY(segmentCard()->stateChip()->toolTip().contains(QLatin1String("Connected")));
    // Connected cards show what their streams carried, as the hub counts
    // it: nothing yet, no run has used them.
    for (ForwarderCard *live : { card(), segmentCard() }) {
        QVERIFY(
            QTest::qWaitFor([&] { return live->trafficGraph()->isVisibleTo(live); }, kLongWaitMs));
        QCOMPARE(live->trafficGraph()->summary(),
            QStringLiteral(u"0 B/s to the run · 0 B/s from the run"));
        QVERIFY2(
            live->trafficGraph()->details().startsWith(QLatin1String("No traffic in the last")),
            qPrintable(live->trafficGraph()->details()));
    }
    QVERIFY(window.forwardersClient()->isTrafficWatched());

    // Bind…
    click(card()->bindButton());
    auto *bind = qobject_cast<BindDialog *>(opened.data());
    QVERIFY(bind);
    QPushButton *bindOk = bind->buttons()->button(QDialogButtonBox::Ok);
    QVERIFY(!bindOk->isEnabled());
    type(bind->projectBox()->lineEdit(), kProject);
    bind->ttlBox()->setCurrentIndex(bind->ttlBox()->findData(QStringLiteral("8h")));
    type(bind->ttlBox()->lineEdit(), QStringLiteral("91d"));
    QVERIFY(!bindOk->isEnabled());
    QVERIFY(bind->messageLabel()->text().contains(QLatin1String("90 days")));
    type(bind->ttlBox()->lineEdit(), QStringLiteral("8h"));
    QCOMPARE(bind->terms().ttl, QStringLiteral("8h"));
    screenshot(bind, QStringLiteral("bind"));
    QSignalSpy bound(bind, &QDialog::accepted);
    click(bindOk);
    QVERIFY(QTest::qWaitFor([&] { return bound.count() == 1; }, kLongWaitMs));
    QVERIFY(QTest::qWaitFor([&] { return card()->bindingText().contains(kProject); }, kLongWaitMs));
    QVERIFY2(card()->bindingText().contains(QLatin1String("by user:admin")),
        qPrintable(card()->bindingText()));
    QVERIFY2(
        card()->bindingText().contains(QLatin1String(" left)")), qPrintable(card()->bindingText()));
    // A disabled action says why.
    QVERIFY(!card()->bindButton()->isEnabled());
    QVERIFY2(card()->bindButton()->accessibleDescription().contains(kProject),
        qPrintable(card()->bindButton()->accessibleDescription()));
    screenshot(&window, QStringLiteral("forwarders-bound"));
    // The same binding in the project's Forwarded devices.
    window.showPage(MainWindow::Projects);
    // Off screen, the cards' traffic is not asked for.
    QVERIFY(!window.forwardersClient()->isTrafficWatched());
    QVERIFY(QTest::qWaitFor(
        [&] { return window.projectsPage()->projects()->selectRecord(1); }, kLongWaitMs));
    QVERIFY(QTest::qWaitFor(
        [&] { return window.projectsPage()->devices()->visibleRows() == 1; }, kLongWaitMs));
    QCOMPARE(window.projectsPage()->devices()->view()->model()->index(0, 0).data().toString(),
        QStringLiteral("bench-hsm"));
    window.showPage(MainWindow::Forwarders);

    // Unbind asks for a reason first.
    click(card()->unbindButton());
    auto *unbind = qobject_cast<ReasonDialog *>(opened.data());
    QVERIFY(unbind);
    QVERIFY(!unbind->buttons()->button(QDialogButtonBox::Ok)->isEnabled());
    type(unbind->reasonEdit(), QStringLiteral("the bench is returned"));
    QSignalSpy unbound(unbind, &QDialog::accepted);
    click(unbind->buttons()->button(QDialogButtonBox::Ok));
    screenshot(unbind, QStringLiteral("unbind"));
    QVERIFY(QTest::qWaitFor([&] { return unbound.count() == 1; }, kLongWaitMs));
    QVERIFY(QTest::qWaitFor(
        [&] { return card()->bindingText() == QLatin1String("Not bound"); }, kLongWaitMs));

    // Test: each card shows what the hub answered, marked and timed, in the
    // line it had, so nothing below moves.
    QVERIFY(card()->isVisible() && segmentCard()->isVisible());
    const int cardHeight = card()->height();
    const int segmentCardHeight = segmentCard()->height();
    QCOMPARE(card()->testText(), QStringLiteral("Not tested yet"));
    click(card()->testButton());
    click(segmentCard()->testButton());
    QVERIFY(QTest::qWaitFor(
        [&] { return card()->testPassed().has_value() && segmentCard()->testPassed().has_value(); },
        kLongWaitMs));
    for (ForwarderCard *tested : { card(), segmentCard() }) {
        QVERIFY2(QRegularExpression(QStringLiteral("^. (Passed|Failed) \\d{1,2}:\\d{2}"))
                     .match(tested->testText())
                     .hasMatch(),
            qPrintable(tested->testText()));
        QVERIFY2(tested->testText().startsWith(*tested->testPassed() ? QStringLiteral(u"✔ Passed")
                                                                     : QStringLiteral(u"✘ Failed")),
            qPrintable(tested->testText()));
    }
    QCOMPARE(card()->height(), cardHeight);
    QCOMPARE(segmentCard()->height(), segmentCardHeight);
    // No USB device to export: the USB forwarder's Test fails, its mark in
    // the colour of a failure (beside the words, never instead of them).
    QVERIFY2(!*card()->testPassed(), qPrintable(card()->testText()));
    const QLabel *mark = card()->findChild<QLabel *>(QStringLiteral("testMark"));
    QVERIFY(mark);
    QCOMPARE(mark->palette().color(mark->foregroundRole()),
        toneColor(StateChip::Tone::Bad, card()->palette()));
    // The segment's pre-flight report: its interface, link and MTU (capturing
    // its frames takes CAP_NET_RAW, which root has).
    if (::geteuid() == 0) {
        QVERIFY2(*segmentCard()->testPassed(), qPrintable(segmentCard()->testText()));
        QVERIFY2(segmentCard()->testText().contains(QStringLiteral(u"lo · link up · MTU 65536")),
            qPrintable(segmentCard()->testText()));
        QVERIFY2(segmentCard()->testText().contains(QLatin1String("hub round trip")),
            qPrintable(segmentCard()->testText()));
        QVERIFY2(!segmentCard()->testText().contains(QLatin1String("(s)")),
            qPrintable(segmentCard()->testText()));
    }
    screenshot(&window, QStringLiteral("forwarders-tested"));

    // Bound again, for Revoke to cut.
    click(card()->bindButton());
    auto *rebind = qobject_cast<BindDialog *>(opened.data());
    QVERIFY(rebind);
    type(rebind->projectBox()->lineEdit(), kProject);
    QSignalSpy rebound(rebind, &QDialog::accepted);
    click(rebind->actionButton());
    QVERIFY(QTest::qWaitFor([&] { return rebound.count() == 1; }, kLongWaitMs));
    QVERIFY(QTest::qWaitFor([&] { return card()->bindingText().contains(kProject); }, kLongWaitMs));

    // The forwarder goes away: the card greys out within a second.
    QElapsedTimer clock;
    clock.start();
    QVERIFY(forwarder.kill());
    QVERIFY(QTest::qWaitFor(
        [&] { return card()->stateText().startsWith(QLatin1String("Offline")); }, kLongWaitMs));
    QVERIFY2(clock.elapsed() < 1000,
        qPrintable(QStringLiteral("greyed out after %1 ms").arg(clock.elapsed())));
    QVERIFY(!card()->testButton()->isEnabled());
    QVERIFY(!card()->trafficGraph()->isVisibleTo(card()));
    QVERIFY2(card()->testButton()->accessibleDescription().contains(QLatin1String("offline")),
        qPrintable(card()->testButton()->accessibleDescription()));
    screenshot(&window, QStringLiteral("forwarders-offline"));

    // Revoke confirms, naming what it cuts.
    click(card()->revokeButton());
    auto *revoke = qobject_cast<ReasonDialog *>(opened.data());
    QVERIFY(revoke);
    QVERIFY(revoke->buttons()->button(QDialogButtonBox::Ok)->isEnabled());
    // It names what it cuts: the binding to the project.
    const auto labels = revoke->findChildren<QLabel *>();
    QVERIFY(std::any_of(labels.begin(), labels.end(), [](const QLabel *label) {
        return label->text().contains(kProject)
            && label->text().contains(QLatin1String("for good"));
    }));
    QSignalSpy revoked(revoke, &QDialog::accepted);
    screenshot(revoke, QStringLiteral("revoke"));
    click(revoke->buttons()->button(QDialogButtonBox::Ok));
    QVERIFY(QTest::qWaitFor([&] { return revoked.count() == 1; }, kLongWaitMs));
    // A revoked forwarder is history: hidden, as in the CLI's list, and
    // counted where it can be shown.
    QVERIFY(QTest::qWaitFor([&] { return !card(); }, kLongWaitMs));
    QCOMPARE(page->cards().size(), 1);
    QVERIFY(page->showRevokedBox()->isVisibleTo(page));
    QCOMPARE(page->showRevokedBox()->text(), QStringLiteral("Show revoked (1)"));
    click(page->showRevokedBox());
    QCOMPARE(page->cards().size(), 2);
    QVERIFY(card());
    QVERIFY2(
        card()->stateText().startsWith(QLatin1String("Revoked")), qPrintable(card()->stateText()));
    QCOMPARE(card()->stateChip()->tone(), StateChip::Tone::Bad);
    // Nothing is left to do with it, and its last Test is no longer news.
    QVERIFY(!card()->bindButton()->isVisibleTo(card()));
    QVERIFY(!card()->revokeButton()->isVisibleTo(card()));
    QVERIFY(!card()->findChild<QLabel *>(QStringLiteral("testResult"))->isVisibleTo(card()));
    // Its binding is gone with it, on the card and in the project.
    QVERIFY(
        QTest::qWaitFor([&] { return !card()->bindingText().contains(kProject); }, kLongWaitMs));
    QVERIFY(QTest::qWaitFor(
        [&] { return window.projectsPage()->devices()->visibleRows() == 0; }, kLongWaitMs));
    // With nothing left but its name and device, the card is as low as that.
    QVERIFY2(QTest::qWaitFor(
                 [&] { return card()->height() <= card()->sizeHint().height(); }, kLongWaitMs),
        qPrintable(QStringLiteral("%1 px high for %2 px of content")
                       .arg(card()->height())
                       .arg(card()->sizeHint().height())));
    screenshot(&window, QStringLiteral("forwarders-revoked"));

    // Search narrows the cards.
    type(page->searchEdit(), QStringLiteral("nothing-like-it"));
    QVERIFY(page->cards().isEmpty());
    type(page->searchEdit(), QStringLiteral("1050"));
    QCOMPARE(page->cards().size(), 1);
    QCOMPARE(page->cards().constFirst()->forwarderId(), id);
}

void TestDashboardWindow::aMaintainersRequestIsApprovedByAnotherAdministrator()
{
    HubProcess &hub = m_rig->hub();
    const Enrollment lab = hub.enroll(
        QStringLiteral("lab"), { QStringLiteral("--interface"), QStringLiteral("eth1") });
    QVERIFY2(lab.ok, qPrintable(lab.error));
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("executor"), QStringLiteral("enroll"),
                           QStringLiteral("--name"), QStringLiteral("buildbox") }),
        0);
    const QString mariaToken = addPerson(QStringLiteral("maria"), QStringLiteral("maintainer"));
    const QString bobToken = addPerson(QStringLiteral("bob"), QStringLiteral("administrator"));
    QVERIFY(!mariaToken.isEmpty() && !bobToken.isEmpty());

    // Maria, a maintainer, asks for the lab segment from her project's overview.
    HubApi mariaApi;
    const QJsonObject maria = signIn(mariaApi, mariaToken);
    QCOMPARE(maria.value(QLatin1String("user")).toString(), QStringLiteral("maria"));
    MainWindow mariaWindow(&mariaApi, maria);
    mariaWindow.show();
    QVERIFY(!mariaWindow.auditPage());
    mariaWindow.showPage(MainWindow::Projects);
    ProjectsPage *projects = mariaWindow.projectsPage();
    QVERIFY(QTest::qWaitFor([&] { return projects->projects()->selectRecord(1); }, kLongWaitMs));
    QCOMPARE(projects->currentProject(), kProject);
    QVERIFY(projects->requestButton()->isVisible());
    QVERIFY(!projects->bindButton()->isVisible());
    QPointer<QDialog> opened;
    connect(projects, &ProjectsPage::dialogOpened, this,
        [&opened](QDialog *dialog) { opened = dialog; });
    QVERIFY(QTest::qWaitFor(
        [&] { return mariaWindow.forwardersClient()->model()->rowCount() == 1; }, kLongWaitMs));
    click(projects->requestButton());
    auto *request = qobject_cast<BindDialog *>(opened.data());
    QVERIFY(request);
    QCOMPARE(request->forwarderBox()->count(), 1);
    QVERIFY(!request->projectBox()->isEnabled());
    // A segment: the sandbox-side fields are offered and checked.
    QVERIFY(request->targetEdit()->isVisibleTo(request));
    type(request->addressEdit(), QStringLiteral("10.0.0.300/24"));
    QVERIFY(!request->actionButton()->isEnabled());
    type(request->addressEdit(), QStringLiteral("10.0.0.30/24"));
    QVERIFY(!request->actionButton()->isEnabled()); // no reason yet
    type(request->reasonEdit(), QStringLiteral("tonight's run"));
    request->ttlBox()->setCurrentIndex(request->ttlBox()->findData(QStringLiteral("8h")));
    screenshot(request, QStringLiteral("request"));
    QSignalSpy filed(request, &QDialog::accepted);
    click(request->actionButton());
    QVERIFY(QTest::qWaitFor([&] { return filed.count() == 1; }, kLongWaitMs));

    // Her own request waits in "Your requests"; she has nothing to decide.
    ApprovalsPage *mariaApprovals = mariaWindow.approvalsPage();
    mariaApprovals->refresh();
    QVERIFY(
        QTest::qWaitFor([&] { return mariaApprovals->mine()->visibleRows() == 1; }, kLongWaitMs));
    QCOMPARE(mariaApprovals->inbox()->visibleRows(), 0);
    const QJsonObject mine = mariaApprovals->mine()
                                 ->view()
                                 ->model()
                                 ->index(0, 0)
                                 .data(JsonTableModel::RecordRole)
                                 .toJsonObject();
    const qint64 requestId = mine.value(QLatin1String("id")).toInteger();
    QCOMPARE(mine.value(QLatin1String("state")).toString(), QStringLiteral("pending"));
    // Approving it herself is refused (a maintainer decides nothing), and
    // leaves no binding behind.
    std::optional<Result<QJsonObject>> own;
    mariaWindow.forwardersClient()->approve(
        requestId, {}, {}, this, [&own](const Result<QJsonObject> &answer) { own = answer; });
    QVERIFY(QTest::qWaitFor([&] { return own.has_value(); }, kLongWaitMs));
    QVERIFY(!*own);
    QCOMPARE(own->error().code, QStringLiteral("forbidden"));
    const QJsonValue bindings = hub.cliJson(
        { QStringLiteral("forward"), QStringLiteral("bindings"), QStringLiteral("--json") });
    QVERIFY2(
        bindings.toObject().value(QLatin1String("items")).isArray(), qPrintable(hub.lastError()));
    QCOMPARE(bindings.toObject().value(QLatin1String("items")).toArray().size(), 0);

    // Bob, an administrator of the project, sees it in his inbox with a count.
    HubApi bobApi;
    const QJsonObject bob = signIn(bobApi, bobToken);
    MainWindow bobWindow(&bobApi, bob);
    bobWindow.show();
    QVERIFY(QTest::qWaitFor(
        [&] {
            return bobWindow.navigation()->item(MainWindow::Approvals)->text()
                == QLatin1String("Approvals (1)");
        },
        kLongWaitMs));
    bobWindow.showPage(MainWindow::Approvals);
    ApprovalsPage *approvals = bobWindow.approvalsPage();
    QPointer<QDialog> decision;
    connect(approvals, &ApprovalsPage::dialogOpened, this,
        [&decision](QDialog *dialog) { decision = dialog; });
    QVERIFY(!approvals->approveButton()->isEnabled());
    QVERIFY(approvals->inbox()->selectRecord(requestId));
    screenshot(&bobWindow, QStringLiteral("approvals"));
    click(approvals->approveButton());
    auto *approve = qobject_cast<ApproveDialog *>(decision.data());
    QVERIFY(approve);
    // He may shorten the time, not lengthen it.
    type(approve->ttlBox()->lineEdit(), QStringLiteral("9h"));
    QVERIFY(!approve->actionButton()->isEnabled());
    approve->ttlBox()->setCurrentIndex(approve->ttlBox()->findData(QStringLiteral("1h")));
    QCOMPARE(approve->ttl(), QStringLiteral("1h"));
    screenshot(approve, QStringLiteral("approve"));
    QSignalSpy approved(approve, &QDialog::accepted);
    click(approve->actionButton());
    QVERIFY(QTest::qWaitFor([&] { return approved.count() == 1; }, kLongWaitMs));

    // The binding appears, for an hour, on the card and in the project's devices.
    ForwardersPage *cards = bobWindow.forwardersPage();
    QVERIFY(QTest::qWaitFor(
        [&] {
            return cards->cardFor(lab.id)
                && cards->cardFor(lab.id)->bindingText().contains(kProject);
        },
        kLongWaitMs));
    QVERIFY2(cards->cardFor(lab.id)->bindingText().contains(QLatin1String("min left")),
        qPrintable(cards->cardFor(lab.id)->bindingText()));
    QVERIFY2(cards->cardFor(lab.id)->bindingText().contains(QLatin1String("10.0.0.30/24")),
        qPrintable(cards->cardFor(lab.id)->bindingText()));
    QVERIFY(QTest::qWaitFor([&] { return projects->devices()->visibleRows() == 1; }, kLongWaitMs));
    QVERIFY(QTest::qWaitFor(
        [&] {
            return bobWindow.navigation()->item(MainWindow::Approvals)->text()
                == QLatin1String("Approvals");
        },
        kLongWaitMs));
    // Maria's request now reads as decided.
    QVERIFY(QTest::qWaitFor(
        [&] {
            return mariaApprovals->mine()->view()->model()->index(0, 2).data().toString()
                == QLatin1String("approved");
        },
        kLongWaitMs));

    // A second request, denied with a reason Maria then reads.
    click(projects->requestButton());
    auto *second = qobject_cast<BindDialog *>(opened.data());
    QVERIFY(second);
    type(second->reasonEdit(), QStringLiteral("and the weekend too"));
    QSignalSpy filedAgain(second, &QDialog::accepted);
    click(second->actionButton());
    QVERIFY(QTest::qWaitFor([&] { return filedAgain.count() == 1; }, kLongWaitMs));
    QVERIFY(QTest::qWaitFor([&] { return approvals->inbox()->visibleRows() == 1; }, kLongWaitMs));
    QVERIFY(approvals->inbox()->selectRecord(firstRecordId(approvals->inbox())));
    click(approvals->denyButton());
    auto *deny = qobject_cast<ReasonDialog *>(decision.data());
    QVERIFY(deny);
    QVERIFY(!deny->actionButton()->isEnabled());
    type(deny->reasonEdit(), QStringLiteral("the lab is closed at weekends"));
    screenshot(deny, QStringLiteral("deny"));
    QSignalSpy denied(deny, &QDialog::accepted);
    click(deny->actionButton());
    QVERIFY(QTest::qWaitFor([&] { return denied.count() == 1; }, kLongWaitMs));
    QVERIFY(QTest::qWaitFor([&] { return approvals->inbox()->visibleRows() == 0; }, kLongWaitMs));
    mariaApprovals->mine()->filterEdit()->setText(QStringLiteral("denied"));
    QVERIFY(
        QTest::qWaitFor([&] { return mariaApprovals->mine()->visibleRows() == 1; }, kLongWaitMs));
    QVERIFY(mariaApprovals->mine()->view()->model()->index(0, 6).data().toString().contains(
        QLatin1String("weekends")));
    mariaApprovals->mine()->filterEdit()->clear();
    mariaWindow.showPage(MainWindow::Approvals);
    mariaApprovals->tabs()->setCurrentWidget(mariaApprovals->mine());
    screenshot(&mariaWindow, QStringLiteral("your-requests"));
    // Bob's history holds both decisions (Maria decides nothing: hers is empty).
    bobWindow.showPage(MainWindow::Approvals);
    approvals->tabs()->setCurrentWidget(approvals->history());
    approvals->refresh();
    QVERIFY(QTest::qWaitFor([&] { return approvals->history()->visibleRows() == 2; }, kLongWaitMs));
    // No cell is empty, the approval given without a reason included.
    QAbstractItemModel *decided = approvals->history()->view()->model();
    for (int row = 0; row < decided->rowCount(); ++row) {
        for (int column = 0; column < decided->columnCount(); ++column)
            QVERIFY2(!decided->index(row, column).data().toString().isEmpty(),
                qPrintable(QStringLiteral("row %1, column %2 is empty").arg(row).arg(column)));
    }
    // Nothing is clipped at this size: the widest column gives way.
    QCOMPARE(approvals->history()->view()->horizontalScrollBar()->maximum(), 0);
    screenshot(&bobWindow, QStringLiteral("history"));

    // Executors and the audit log, as the hub's administrator sees them.
    HubApi adminApi;
    const QJsonObject admin = signIn(adminApi, hub.adminToken());
    MainWindow adminWindow(&adminApi, admin);
    adminWindow.show();
    QVERIFY(adminWindow.auditPage());
    QVERIFY(QTest::qWaitFor(
        [&] { return adminWindow.executorsPage()->table()->visibleRows() == 1; }, kLongWaitMs));
    adminWindow.showPage(MainWindow::Executors);
    // Upgrade is for hub administrators: maria has no such button. What the
    // hub or the device answers is shown in place: this agent was enrolled
    // and never connected.
    QVERIFY(!mariaWindow.executorsPage()->upgradeButton());
    ExecutorsPage *executors = adminWindow.executorsPage();
    QVERIFY(executors->upgradeButton());
    QPointer<QDialog> upgradeDialog;
    connect(executors, &ExecutorsPage::dialogOpened, this,
        [&upgradeDialog](QDialog *dialog) { upgradeDialog = dialog; });
    QVERIFY(executors->table()->selectRecord(firstRecordId(executors->table())));
    QVERIFY(executors->upgradeButton()->isEnabled());
    click(executors->upgradeButton());
    auto *upgrade = qobject_cast<UpgradeDialog *>(upgradeDialog.data());
    QVERIFY(upgrade);
    QCOMPARE(upgrade->targetEdit()->text(), QStringLiteral("latest"));
    type(upgrade->targetEdit(), QStringLiteral("newest"));
    QVERIFY(!upgrade->actionButton()->isEnabled());
    type(upgrade->targetEdit(), QStringLiteral("latest"));
    QVERIFY(upgrade->actionButton()->isEnabled());
    click(upgrade->actionButton());
    QVERIFY(QTest::qWaitFor(
        [&] { return upgrade->messageLabel()->text().contains(QLatin1String("not connected")); },
        kLongWaitMs));
    QVERIFY(upgrade->isVisible());
    screenshot(upgrade, QStringLiteral("executor-upgrade-refused"));
    upgrade->reject();

    // + Enroll executor: a name, then the agent's one-time command.
    QVERIFY(executors->enrollButton()->isEnabled());
    click(executors->enrollButton());
    auto *enrollExecutor = qobject_cast<ExecutorEnrollDialog *>(upgradeDialog.data());
    QVERIFY(enrollExecutor);
    type(enrollExecutor->nameEdit(), QStringLiteral("Build Box"));
    QVERIFY(!enrollExecutor->actionButton()->isEnabled());
    type(enrollExecutor->nameEdit(), QStringLiteral("buildbox-2"));
    QVERIFY(enrollExecutor->actionButton()->isEnabled());
    click(enrollExecutor->actionButton());
    EnrollmentCommandView *agentCommand = enrollExecutor->commandView();
    QVERIFY(QTest::qWaitFor(
        [&] { return !agentCommand->commandEdit()->text().isEmpty(); }, kLongWaitMs));
    QVERIFY2(agentCommand->commandEdit()->text().endsWith(
                 QLatin1String("cloop executor agent --token-file agent.bundle")),
        qPrintable(agentCommand->commandEdit()->text()));
    screenshot(enrollExecutor, QStringLiteral("executor-enroll-command"));
    click(enrollExecutor->actionButton());
    QVERIFY(QTest::qWaitFor([&] { return executors->table()->visibleRows() == 2; }, kLongWaitMs));

    // Nothing selected: the actions on one executor say why they wait.
    executors->table()->view()->clearSelection();
    QVERIFY(!executors->revokeButton()->isEnabled());
    QVERIFY(executors->revokeButton()->accessibleDescription().contains(QLatin1String("Select")));

    // buildbox never connected: a new command replaces its first.
    QVERIFY(executors->table()->selectRecord(firstRecordId(executors->table())));
    const auto selectedName = [&] {
        return executors->table()->selectedRecord().value(QLatin1String("name")).toString();
    };
    QVERIFY(executors->table()->selectRecord(1));
    QCOMPARE(selectedName(), QStringLiteral("buildbox"));
    QVERIFY(executors->reenrollButton()->isEnabled());
    click(executors->reenrollButton());
    auto *reissue = qobject_cast<ExecutorEnrollDialog *>(upgradeDialog.data());
    QVERIFY(reissue);
    QVERIFY(reissue->actionButton()->isEnabled());
    click(reissue->actionButton());
    QVERIFY(QTest::qWaitFor(
        [&] { return !reissue->commandView()->commandEdit()->text().isEmpty(); }, kLongWaitMs));
    QVERIFY(reissue->commandView()->validityLabel()->text().endsWith(
        QLatin1String("The earlier command no longer works.")));
    click(reissue->actionButton());

    // Revoke asks, names what it cuts, and the row says revoked.
    QVERIFY(executors->table()->selectRecord(1));
    click(executors->revokeButton());
    auto *revokeExecutor = qobject_cast<ReasonDialog *>(upgradeDialog.data());
    QVERIFY(revokeExecutor);
    type(revokeExecutor->reasonEdit(), QStringLiteral("replaced by buildbox-2"));
    QSignalSpy executorRevoked(revokeExecutor, &QDialog::accepted);
    click(revokeExecutor->actionButton());
    QVERIFY(QTest::qWaitFor([&] { return executorRevoked.count() == 1; }, kLongWaitMs));
    QVERIFY(QTest::qWaitFor(
        [&] {
            return executors->table()->selectRecord(1)
                && executors->table()->selectedRecord().value(QLatin1String("state")).toString()
                == QLatin1String("revoked");
        },
        kLongWaitMs));
    QVERIFY(!executors->revokeButton()->isEnabled());
    QVERIFY(!executors->reenrollButton()->isEnabled());
    QVERIFY(!executors->upgradeButton()->isEnabled());
    QVERIFY(executors->upgradeButton()->accessibleDescription().contains(QLatin1String("revoked")));
    // No cell is left empty for what an agent has not reported.
    QAbstractItemModel *rows = executors->table()->view()->model();
    for (int row = 0; row < rows->rowCount(); ++row) {
        for (int column = 0; column < rows->columnCount(); ++column)
            QVERIFY2(!rows->index(row, column).data().toString().isEmpty(),
                qPrintable(QStringLiteral("row %1, column %2 is empty").arg(row).arg(column)));
    }
    screenshot(&adminWindow, QStringLiteral("executors"));
    adminWindow.showPage(MainWindow::Audit);
    AuditPage *audit = adminWindow.auditPage();
    QVERIFY(QTest::qWaitFor([&] { return audit->table()->visibleRows() > 0; }, kLongWaitMs));
    type(audit->table()->filterEdit(), QStringLiteral("forwarder.approve"));
    QCOMPARE(audit->table()->visibleRows(), 1);
    // It reads as words: the forwarder by name, the details as key=value.
    const QAbstractItemModel *auditRows = audit->table()->view()->model();
    QCOMPARE(auditRows->index(0, 3).data().toString(),
        QStringLiteral("forwarder lab (#%1)").arg(lab.id));
    const QString approval = auditRows->index(0, 4).data().toString();
    QVERIFY2(approval.contains(QLatin1String("project=/srv/projects/bench"))
            && !approval.contains(QLatin1Char('{')),
        qPrintable(approval));
    type(audit->table()->filterEdit(), QString());
    screenshot(&adminWindow, QStringLiteral("audit"));
    adminWindow.showPage(MainWindow::Projects);
    QVERIFY(QTest::qWaitFor(
        [&] { return adminWindow.projectsPage()->projects()->selectRecord(1); }, kLongWaitMs));
    QVERIFY(QTest::qWaitFor(
        [&] { return adminWindow.projectsPage()->devices()->visibleRows() == 1; }, kLongWaitMs));
    QVERIFY(adminWindow.projectsPage()->bindButton()->isVisible());
    // The overview's table is whole at this size.
    QCOMPARE(adminWindow.projectsPage()->devices()->view()->horizontalScrollBar()->maximum(), 0);
    screenshot(&adminWindow, QStringLiteral("project-overview"));
}

// The graph as a card draws it from an answer of GET /api/forwarders/traffic:
// a minute of a run pulling a capture through a segment, then quiet. (The
// window test above sees the hub's real answer, with no run to fill it.)
void TestDashboardWindow::aCardDrawsTheTrafficTheHubCounted()
{
    api::Forwarder segment;
    segment.id = 5;
    segment.name = QStringLiteral("lab-segment");
    segment.state = api::EnrolledDaemon::State::Connected;
    segment.connected = true;
    segment.device = *protocol::DeviceSpec::parseInterface(QStringLiteral("eth1"));
    segment.deviceDescription = QStringLiteral("l2 eth1");
    ForwarderListModel model;
    model.setForwarderRecords({ segment });

    constexpr int kSteps = 120;
    QJsonArray toRun;
    QJsonArray fromRun;
    QJsonArray framesToRun;
    QJsonArray framesFromRun;
    QJsonArray droppedToRun;
    QJsonArray droppedFromRun;
    for (int step = 0; step < kSteps; ++step) {
        // Steps 60..107 carry 12.5 MB/s to the run, peaking at 25 MB/s at 80;
        // the forwarder could not keep up at 90 and dropped 25 frames.
        const bool busy = step >= 60 && step < 108;
        const bool last = step == kSteps - 1;
        toRun.append(busy ? (step == 80 ? 125'000'000 : 62'500'000) : 0);
        fromRun.append(busy ? 1'250'000 : (last ? 5'000 : 0));
        framesToRun.append(busy ? 45'000 : 0);
        framesFromRun.append(busy ? 15'000 : (last ? 10 : 0));
        droppedToRun.append(step == 90 ? 25 : 0);
        droppedFromRun.append(0);
    }
    const auto answer = api::ForwarderTraffic::fromJson(
        { { QStringLiteral("step_seconds"), 5 }, { QStringLiteral("steps"), kSteps },
            { QStringLiteral("until"), QStringLiteral("2026-12-06T10:00:00.000Z") },
            { QStringLiteral("items"),
                QJsonArray { QJsonObject { { QStringLiteral("forwarder_id"), 5 },
                    { QStringLiteral("to_agent_bytes"), toRun },
                    { QStringLiteral("to_forwarder_bytes"), fromRun },
                    { QStringLiteral("unit"), QStringLiteral("frames") },
                    { QStringLiteral("to_agent_frames"), framesToRun },
                    { QStringLiteral("to_forwarder_frames"), framesFromRun },
                    { QStringLiteral("dropped_to_agent"), droppedToRun },
                    { QStringLiteral("dropped_to_forwarder"), droppedFromRun } } } } });
    QVERIFY(answer);
    model.setTraffic(*answer);

    QWidget host;
    auto *layout = new QVBoxLayout(&host);
    auto *shown = new ForwarderCard(QPersistentModelIndex(model.index(0, 0)), &host);
    layout->addWidget(shown);
    host.resize(760, shown->sizeHint().height() + 24);
    host.show();
    QVERIFY(QTest::qWaitForWindowExposed(&host));
    TrafficGraph *graph = shown->trafficGraph();
    QVERIFY(graph->isVisible());
    // The legend gives the newest step's rates, bytes and frames; the
    // tooltip the window, the peaks and the drops.
    QCOMPARE(graph->summary(),
        QStringLiteral(u"0 B/s · 0.0 frames/s to the run · 1.0 kB/s · 2.0 frames/s from the run "
                       u"· 25 frames dropped"));
    QCOMPARE(graph->details(),
        QStringLiteral("Over the last 10 min, in steps of 5 s, at most 25.0 MB/s to the run and "
                       "250.0 kB/s from it. Frames dropped: 25 on the way to the run (its "
                       "forwarder's stream or socket was full), 0 on the way from it (the "
                       "interface could not take them)."));

    // Drawn: the peak's column reaches the top in the colour to the run; a
    // quiet column holds the baseline only.
    const QImage picture = graph->grab().toImage();
    const auto columnOf = [&](int step) { return int(graph->xOfStep(step)); };
    const auto inkIn = [&](int x, int fromY, int toY, const QColor &ink) {
        for (int y = fromY; y < toY; ++y)
            for (int dx = -1; dx <= 1; ++dx)
                if (const QColor seen = picture.pixelColor(x + dx, y);
                    std::abs(seen.red() - ink.red()) + std::abs(seen.green() - ink.green())
                        + std::abs(seen.blue() - ink.blue())
                    < 80) // an antialiased line's core
                    return true;
        return false;
    };
    const int top = picture.height() / 4;
    QVERIFY(inkIn(columnOf(80), 0, top, graph->toRunColor()));
    QVERIFY(!inkIn(columnOf(30), 0, picture.height() - 4, graph->toRunColor()));
    QVERIFY(!inkIn(columnOf(30), 0, picture.height() - 4, graph->fromRunColor()));
    // The step that dropped frames is marked along the top in the colour
    // of a failure; no other step is.
    const QColor failure = toneColor(StateChip::Tone::Bad, graph->palette());
    QVERIFY(inkIn(columnOf(90), 0, 8, failure));
    QVERIFY(!inkIn(columnOf(100), 0, 8, failure));
    // Half the peak: the busy steps' line is near the middle, not the top.
    QVERIFY(!inkIn(columnOf(70), 0, top, graph->toRunColor()));
    QVERIFY(inkIn(columnOf(70), top, picture.height() * 3 / 4, graph->toRunColor()));
    screenshot(&host, QStringLiteral("forwarder-traffic"));

    // A USB forwarder counts URBs, which are never dropped: the legend says
    // URBs/s and the tooltip says nothing of drops.
    TrafficHistory usb;
    usb.stepSeconds = 5;
    usb.urbs = true;
    usb.toRun = { 0, 65'536 };
    usb.fromRun = { 0, 4'096 };
    usb.framesToRun = { 0, 40 };
    usb.framesFromRun = { 0, 41 };
    usb.droppedToRun = { 0, 0 };
    usb.droppedFromRun = { 0, 0 };
    TrafficGraph usbGraph;
    usbGraph.setHistory(usb);
    QCOMPARE(usbGraph.summary(),
        QStringLiteral(u"13.1 kB/s · 8.0 URBs/s to the run · 819 B/s · 8.2 URBs/s from the run"));
    QVERIFY2(
        !usbGraph.details().contains(QLatin1String("dropped")), qPrintable(usbGraph.details()));
}

QTEST_MAIN(TestDashboardWindow)
#include "tst_dashboardwindow.moc"
