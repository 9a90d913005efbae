// PeopleService without HTTP: users, projects and roles are a hub
// administrator's; a role that changes is told to that user alone.

#include "hub/domain/accesspolicy.h"
#include "hub/domain/peopleservice.h"
#include "tests/hub/apiharness.h"

#include <QtTest>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::hub::testing;

class TestPeopleService : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aRoleChangeIsToldToThatUserOnly();
    void aRoleIsOneOfThree();
    void everyoneSeesTheirOwnProjects();
    void onlyHubAdministratorsAddPeopleAndProjects();

private:
    PeopleService &service() { return m_hub->core().people(); }

    std::unique_ptr<ApiHarness> m_hub;
    ApiPrincipal m_admin;
    ApiPrincipal m_maintainer;
};

void TestPeopleService::init()
{
    m_hub = std::make_unique<ApiHarness>();
    QVERIFY(m_hub->open());
    auto admin = m_hub->addCaller(QStringLiteral("admin"), true);
    auto maintainer = m_hub->addCaller(QStringLiteral("pmaint"));
    QVERIFY(admin && maintainer);
    QVERIFY(m_hub->addProject(QStringLiteral("/srv/projects/bench")));
    QVERIFY(m_hub->addProject(QStringLiteral("/srv/projects/radio")));
    m_admin = *admin;
    m_maintainer = *maintainer;
}

void TestPeopleService::cleanup()
{
    m_hub.reset();
}

void TestPeopleService::aRoleChangeIsToldToThatUserOnly()
{
    auto updated = service().setRole(m_admin,
        { { QStringLiteral("project"), QStringLiteral("/srv/projects/bench") },
            { QStringLiteral("user"), QStringLiteral("pmaint") },
            { QStringLiteral("role"), QStringLiteral("maintainer") } });
    QVERIFY2(updated, qPrintable(failure(updated)));
    QCOMPARE(updated->members.size(), 1);

    const QList<HubEvent> events = m_hub->takeEvents();
    QCOMPARE(events.size(), 1);
    const HubEvent event = events.first();
    QCOMPARE(event.name, QLatin1String(api::hubeventname::kRoleChanged));
    QCOMPARE(event.userId, std::optional<qint64>(m_maintainer.userId));
    QCOMPARE(event.data.value(QLatin1String("role")).toString(), QStringLiteral("maintainer"));
    QCOMPARE(event.at, m_hub->clock.now());
    const AccessPolicy &policy = m_hub->core().policy();
    QVERIFY(policy.maySee(m_maintainer, event));
    QVERIFY(policy.maySee(m_admin, event));

    // and "none" takes the role away again.
    auto removed = service().setRole(m_admin,
        { { QStringLiteral("project"), QStringLiteral("/srv/projects/bench") },
            { QStringLiteral("user"), QStringLiteral("pmaint") },
            { QStringLiteral("role"), QStringLiteral("none") } });
    QVERIFY(removed);
    QVERIFY(removed->members.isEmpty());
    const QList<HubEvent> again = m_hub->takeEvents();
    QCOMPARE(again.size(), 1);
    QCOMPARE(again.first().data.value(QLatin1String("role")).toString(), QStringLiteral("none"));
}

void TestPeopleService::aRoleIsOneOfThree()
{
    const QJsonObject owner { { QStringLiteral("project"), QStringLiteral("/srv/projects/bench") },
        { QStringLiteral("user"), QStringLiteral("pmaint") },
        { QStringLiteral("role"), QStringLiteral("owner") } };
    QCOMPARE(service().setRole(m_admin, owner).error().code, QStringLiteral("invalid_role"));
    // Somebody who may not grant roles is told that first.
    QCOMPARE(service().setRole(m_maintainer, owner).error().code, QStringLiteral("forbidden"));
    QVERIFY(m_hub->takeEvents().isEmpty());
}

void TestPeopleService::everyoneSeesTheirOwnProjects()
{
    QVERIFY(service().setRole(m_admin,
        { { QStringLiteral("project"), QStringLiteral("/srv/projects/radio") },
            { QStringLiteral("user"), QStringLiteral("pmaint") },
            { QStringLiteral("role"), QStringLiteral("maintainer") } }));
    auto theirs = service().projects(m_maintainer);
    QVERIFY(theirs);
    QCOMPARE(theirs->size(), 1);
    QCOMPARE(theirs->first().path, QStringLiteral("/srv/projects/radio"));
    QCOMPARE(service().projects(m_admin)->size(), 2);
    auto roles = service().rolesOf(m_maintainer);
    QVERIFY(roles);
    QCOMPARE(roles->size(), 1);
    QCOMPARE(roles->first().role, ProjectRole::Maintainer);
}

void TestPeopleService::onlyHubAdministratorsAddPeopleAndProjects()
{
    const QJsonObject user { { QStringLiteral("name"), QStringLiteral("newbie") },
        { QStringLiteral("hub_admin"), QStringLiteral("yes") } };
    QCOMPARE(service().addUser(m_maintainer, user).error().code, QStringLiteral("forbidden"));
    QCOMPARE(service().addUser(m_admin, user).error().code, QStringLiteral("invalid_request"));
    auto added
        = service().addUser(m_admin, { { QStringLiteral("name"), QStringLiteral("newbie") } });
    QVERIFY2(added, qPrintable(failure(added)));
    QVERIFY(!added->hubAdmin);
    QCOMPARE(service().users(m_maintainer).error().code, QStringLiteral("forbidden"));
    QCOMPARE(service().users(m_admin)->size(), 3);

    const QJsonObject project { { QStringLiteral("path"), QStringLiteral("/srv/projects/new") } };
    QCOMPARE(service().addProject(m_maintainer, project).error().code, QStringLiteral("forbidden"));
    auto created = service().addProject(m_admin, project);
    QVERIFY2(created, qPrintable(failure(created)));
    QCOMPARE(created->createdBy, QStringLiteral("user:admin"));
}

QTEST_GUILESS_MAIN(TestPeopleService)
#include "tst_peopleservice.moc"
