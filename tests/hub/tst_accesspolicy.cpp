// AccessPolicy on its own: the table of who may do what, the self-approval
// rule and which events reach whom, for the callers of docs/api.md.

#include "hub/domain/accesspolicy.h"
#include "hub/domain/eventbus.h"
#include "hub/storage/requeststore.h"
#include "tests/hub/apiharness.h"

#include <QtTest>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::hub::testing;

using HubAction = AccessPolicy::HubAction;
using ProjectAction = AccessPolicy::ProjectAction;
using UserAction = AccessPolicy::UserAction;

Q_DECLARE_METATYPE(cloop::hub::AccessPolicy::HubAction)
Q_DECLARE_METATYPE(cloop::hub::AccessPolicy::ProjectAction)

class TestAccessPolicy : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void hubActions_data();
    void hubActions();
    void projectActions_data();
    void projectActions();
    void refusalsNameTheActionAndTheCaller();
    void nobodyDecidesTheirOwnRequest();
    void anotherUsersThingsAreAHubAdministratorsOnly();
    void eventsReachWhoMaySeeThem();

private:
    ApiPrincipal principal(const QString &user) const { return m_principals.value(user); }
    const AccessPolicy &policy() { return m_hub->core().policy(); }

    std::unique_ptr<ApiHarness> m_hub;
    QHash<QString, ApiPrincipal> m_principals;
    qint64 m_p = 0; // padmin administers it, pmaint maintains it
    qint64 m_q = 0; // qadmin administers it
};

void TestAccessPolicy::init()
{
    m_hub = std::make_unique<ApiHarness>();
    QVERIFY(m_hub->open());
    for (const QString &user : { QStringLiteral("admin"), QStringLiteral("padmin"),
             QStringLiteral("pmaint"), QStringLiteral("qadmin"), QStringLiteral("nobody") }) {
        auto caller = m_hub->addCaller(user, user == QLatin1String("admin"));
        QVERIFY2(caller, qPrintable(failure(caller)));
        m_principals.insert(user, *caller);
    }
    auto p = m_hub->addProject(QStringLiteral("/srv/projects/bench"));
    auto q = m_hub->addProject(QStringLiteral("/srv/projects/radio"));
    QVERIFY(p && q);
    m_p = *p;
    m_q = *q;
    QVERIFY(m_hub->grant(m_p, QStringLiteral("padmin"), ProjectRole::Administrator));
    QVERIFY(m_hub->grant(m_p, QStringLiteral("pmaint"), ProjectRole::Maintainer));
    QVERIFY(m_hub->grant(m_q, QStringLiteral("qadmin"), ProjectRole::Administrator));
}

void TestAccessPolicy::cleanup()
{
    m_principals.clear();
    m_hub.reset();
}

void TestAccessPolicy::hubActions_data()
{
    QTest::addColumn<HubAction>("action");
    QTest::addColumn<bool>("anyRole"); // false: hub administrators only

    QTest::newRow("enroll forwarder") << HubAction::EnrollForwarder << false;
    QTest::newRow("revoke forwarder") << HubAction::RevokeForwarder << false;
    QTest::newRow("test forwarder") << HubAction::TestForwarder << false;
    QTest::newRow("list forwarders") << HubAction::ListForwarders << true;
    QTest::newRow("read forwarder") << HubAction::ReadForwarder << true;
    QTest::newRow("enroll executor") << HubAction::EnrollExecutor << false;
    QTest::newRow("revoke executor") << HubAction::RevokeExecutor << false;
    QTest::newRow("list executors") << HubAction::ListExecutors << true;
    QTest::newRow("read executor") << HubAction::ReadExecutor << true;
    QTest::newRow("create virtual executor") << HubAction::CreateVirtualExecutor << false;
    QTest::newRow("list virtual executors") << HubAction::ListVirtualExecutors << true;
    QTest::newRow("list bindings") << HubAction::ListBindings << true;
    QTest::newRow("add project") << HubAction::AddProject << false;
    QTest::newRow("grant role") << HubAction::GrantRole << false;
    QTest::newRow("list users") << HubAction::ListUsers << false;
    QTest::newRow("add user") << HubAction::AddUser << false;
    QTest::newRow("create token") << HubAction::CreateToken << false;
    QTest::newRow("read audit log") << HubAction::ReadAuditLog << false;
    QTest::newRow("subscribe to events") << HubAction::SubscribeToEvents << true;
}

void TestAccessPolicy::hubActions()
{
    QFETCH(HubAction, action);
    QFETCH(bool, anyRole);

    QVERIFY(policy().require(principal(QStringLiteral("admin")), action));
    for (const QString &member :
        { QStringLiteral("padmin"), QStringLiteral("pmaint"), QStringLiteral("qadmin") }) {
        const Status allowed = policy().require(principal(member), action);
        QCOMPARE(allowed.ok(), anyRole);
        if (!allowed.ok())
            QCOMPARE(allowed.error().code, QStringLiteral("forbidden"));
    }
    // Without a role, nothing of the hub is anyone's business.
    const Status stranger = policy().require(principal(QStringLiteral("nobody")), action);
    QVERIFY(!stranger);
    QCOMPARE(stranger.error().code, QStringLiteral("forbidden"));
}

void TestAccessPolicy::projectActions_data()
{
    QTest::addColumn<ProjectAction>("action");
    QTest::addColumn<bool>("members"); // false: executor.manage on the project

    QTest::newRow("bind") << ProjectAction::Bind << false;
    QTest::newRow("unbind") << ProjectAction::Unbind << false;
    QTest::newRow("approve") << ProjectAction::ApproveRequest << false;
    QTest::newRow("deny") << ProjectAction::DenyRequest << false;
    QTest::newRow("request binding") << ProjectAction::RequestBinding << true;
    QTest::newRow("list bindings") << ProjectAction::ListBindings << true;
    QTest::newRow("start run") << ProjectAction::StartRun << true;
    QTest::newRow("read run") << ProjectAction::ReadRun << true;
}

void TestAccessPolicy::projectActions()
{
    QFETCH(ProjectAction, action);
    QFETCH(bool, members);

    QVERIFY(policy().require(principal(QStringLiteral("admin")), m_p, action));
    QVERIFY(policy().require(principal(QStringLiteral("padmin")), m_p, action));
    QCOMPARE(policy().require(principal(QStringLiteral("pmaint")), m_p, action).ok(), members);
    // A role elsewhere counts for nothing here.
    QVERIFY(!policy().require(principal(QStringLiteral("qadmin")), m_p, action));
    QVERIFY(!policy().require(principal(QStringLiteral("nobody")), m_p, action));
    QVERIFY(policy().require(principal(QStringLiteral("qadmin")), m_q, action));
}

void TestAccessPolicy::refusalsNameTheActionAndTheCaller()
{
    const Status enroll
        = policy().require(principal(QStringLiteral("padmin")), HubAction::EnrollForwarder);
    QCOMPARE(enroll.error().message,
        QStringLiteral("enrolling a forwarder (executor.manage) needs a hub administrator; "
                       "padmin is not one"));
    const Status bind
        = policy().require(principal(QStringLiteral("pmaint")), m_p, ProjectAction::Bind);
    QCOMPARE(bind.error().message,
        QStringLiteral("binding a forwarder needs the permission executor.manage on "
                       "/srv/projects/bench, held by hub administrators and the project's "
                       "administrators; pmaint is a maintainer"));
    const Status run
        = policy().require(principal(QStringLiteral("qadmin")), m_p, ProjectAction::StartRun);
    QCOMPARE(run.error().message,
        QStringLiteral("starting a run needs a role in /srv/projects/bench; qadmin has none"));
}

void TestAccessPolicy::nobodyDecidesTheirOwnRequest()
{
    // Given a request of P filed by P's administrator
    RequestRecord request;
    request.id = 7;
    request.projectId = m_p;
    request.requesterId = principal(QStringLiteral("padmin")).userId;

    // the requester may not decide it, whatever else they may do,
    for (const ProjectAction action :
        { ProjectAction::ApproveRequest, ProjectAction::DenyRequest }) {
        const Status own
            = policy().requireDecider(principal(QStringLiteral("padmin")), request, action);
        QVERIFY(!own);
        QCOMPARE(own.error().code, QStringLiteral("own_request"));
        QCOMPARE(own.error().message,
            QStringLiteral("padmin filed request 7; another administrator has to decide it"));
    }
    // a hub administrator may, a maintainer of P and an administrator of Q may not.
    QVERIFY(policy().requireDecider(
        principal(QStringLiteral("admin")), request, ProjectAction::ApproveRequest));
    QCOMPARE(policy()
                 .requireDecider(
                     principal(QStringLiteral("pmaint")), request, ProjectAction::ApproveRequest)
                 .error()
                 .code,
        QStringLiteral("forbidden"));
    QCOMPARE(policy()
                 .requireDecider(
                     principal(QStringLiteral("qadmin")), request, ProjectAction::DenyRequest)
                 .error()
                 .code,
        QStringLiteral("forbidden"));

    // A hub administrator's own request waits for another one, too.
    request.requesterId = principal(QStringLiteral("admin")).userId;
    QCOMPARE(policy()
                 .requireDecider(
                     principal(QStringLiteral("admin")), request, ProjectAction::ApproveRequest)
                 .error()
                 .code,
        QStringLiteral("own_request"));
    QVERIFY(policy().requireDecider(
        principal(QStringLiteral("padmin")), request, ProjectAction::ApproveRequest));
}

void TestAccessPolicy::anotherUsersThingsAreAHubAdministratorsOnly()
{
    const ApiPrincipal pmaint = principal(QStringLiteral("pmaint"));
    const ApiPrincipal padmin = principal(QStringLiteral("padmin"));
    QVERIFY(policy().require(pmaint, pmaint.userId, UserAction::ListTokens));
    QVERIFY(policy().require(pmaint, pmaint.userId, UserAction::RevokeToken));
    const Status others = policy().require(padmin, pmaint.userId, UserAction::RevokeToken);
    QVERIFY(!others);
    QCOMPARE(others.error().message,
        QStringLiteral(
            "revoking another user's token needs a hub administrator; padmin is not one"));
    QVERIFY(policy().require(
        principal(QStringLiteral("admin")), pmaint.userId, UserAction::ListTokens));
}

void TestAccessPolicy::eventsReachWhoMaySeeThem()
{
    const HubEvent ofP { QStringLiteral("binding.created"), {}, m_p };
    const HubEvent hubWide { QStringLiteral("forwarder.enrolled"), {} };
    const HubEvent aboutPmaint { QStringLiteral("token.revoked"), {}, std::nullopt,
        QDateTime::currentDateTimeUtc(), principal(QStringLiteral("pmaint")).userId };

    QVERIFY(policy().maySee(principal(QStringLiteral("admin")), ofP));
    QVERIFY(policy().maySee(principal(QStringLiteral("pmaint")), ofP));
    QVERIFY(!policy().maySee(principal(QStringLiteral("qadmin")), ofP));

    QVERIFY(policy().maySee(principal(QStringLiteral("qadmin")), hubWide));
    QVERIFY(!policy().maySee(principal(QStringLiteral("nobody")), hubWide));

    QVERIFY(policy().maySee(principal(QStringLiteral("pmaint")), aboutPmaint));
    QVERIFY(policy().maySee(principal(QStringLiteral("admin")), aboutPmaint));
    QVERIFY(!policy().maySee(principal(QStringLiteral("padmin")), aboutPmaint));
}

QTEST_GUILESS_MAIN(TestAccessPolicy)
#include "tst_accesspolicy.moc"
